package dev.codeexec.network;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Turns the host name a program asked for into addresses, on the proxy's side: programs behind the proxy have no
 * DNS of their own. The proxy checks every address it gets against the policy and connects to one of those same
 * addresses, so a name cannot resolve to one address for the check and another for the connection.
 */
@FunctionalInterface
public interface HostResolver {

    /**
     * The addresses of {@code host}, a name (never an IP literal: the proxy does not resolve those).
     *
     * @throws UnknownHostException when the name has no address
     */
    List<InetAddress> resolve(String host) throws UnknownHostException;

    /** The JVM's resolver ({@link InetAddress#getAllByName}), with its cache. */
    static HostResolver system() {
        return host -> Arrays.asList(InetAddress.getAllByName(host));
    }

    /**
     * A fixed table of names and addresses, and nothing else: for tests that map public-looking names to local
     * servers, and for deployments that pin the few hosts a policy allows. Names are compared without case and
     * trailing dot; a name not in the table is unknown.
     *
     * @param table host name to IP literals
     */
    static HostResolver fixed(Map<String, List<String>> table) {
        Map<String, List<InetAddress>> resolved = new HashMap<>();
        table.forEach((name, literals) -> {
            List<InetAddress> out = new ArrayList<>();
            for (String literal : literals) {
                out.add(IpRange.addressOf(Objects.requireNonNull(literal, "address")));
            }
            resolved.put(EgressTarget.normalize(name), List.copyOf(out));
        });
        return host -> {
            List<InetAddress> a = resolved.get(EgressTarget.normalize(host));
            if (a == null || a.isEmpty()) {
                throw new UnknownHostException(host);
            }
            return a;
        };
    }
}
