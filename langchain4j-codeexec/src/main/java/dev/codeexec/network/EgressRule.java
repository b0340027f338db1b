package dev.codeexec.network;

import dev.codeexec.engine.InvalidSpecException;
import java.net.InetAddress;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * One allow or deny rule of an {@link EgressPolicy}: a destination, the ports it covers and the protocol.
 *
 * <p>Written {@code [scheme://]destination[:ports]}:
 * <ul>
 *   <li>destination: an exact host name ({@code pypi.org}), {@code *.suffix} for every name below a domain but not
 *       the domain itself ({@code *.pythonhosted.org}), an IP address ({@code 10.1.2.3}, {@code [fd00::1]}) or a CIDR
 *       range ({@code 10.0.0.0/8}, {@code [fc00::/7]}). Names are compared without case and without a trailing
 *       dot. A name rule never matches a connection asked for by IP address. An address rule matches an IP asked
 *       for directly and, for a name another rule let through, the addresses it resolves to: it can deny them, or
 *       allow a non-public one (see {@link EgressPolicy});</li>
 *   <li>ports: one port, a range {@code 8000-8100}, or {@code *} for all. Without ports an allow rule covers the
 *       scheme's port ({@code http} 80, {@code https} 443), and without a scheme both 80 and 443; a deny rule without
 *       ports covers every port;</li>
 *   <li>scheme: {@code http} for plain HTTP requests only, {@code https} for tunnels only (HTTP {@code CONNECT},
 *       SOCKS5), {@code tcp} (or none) for both.</li>
 * </ul>
 * {@code *} alone, {@code *.com}-style single-label suffixes, paths and user info are refused: a rule that broad is a
 * mistake, and {@link EgressPolicy#allowAll()} says it openly.
 */
public final class EgressRule {

    /** Whether a matching connection is allowed or denied. */
    public enum Action { ALLOW, DENY }

    /** Which connections a rule covers: {@code tcp://} (or no scheme), {@code http://} or {@code https://}. */
    public enum Scheme {
        /** Plain HTTP requests and tunnels alike. */
        TCP,
        /** Plain HTTP requests in absolute form only. */
        HTTP,
        /** Tunnels only: HTTP {@code CONNECT} and SOCKS5. */
        HTTPS
    }

    private static final Pattern LABEL = Pattern.compile("[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?");

    private final Action action;
    private final String text;
    private final String name;
    private final boolean wildcard;
    private final IpRange range;
    private final int fromPort;
    private final int toPort;
    private final boolean bothWebPorts;
    private final Scheme scheme;

    private EgressRule(Action action, String text, String name, boolean wildcard, IpRange range, int fromPort,
                       int toPort, boolean bothWebPorts, Scheme scheme) {
        this.action = action;
        this.text = text;
        this.name = name;
        this.wildcard = wildcard;
        this.range = range;
        this.fromPort = fromPort;
        this.toPort = toPort;
        this.bothWebPorts = bothWebPorts;
        this.scheme = scheme;
    }

    /** An allow rule; see the class doc for the syntax. @throws InvalidSpecException for a malformed rule */
    public static EgressRule allow(String rule) {
        return parse(Action.ALLOW, rule);
    }

    /** A deny rule; see the class doc for the syntax. @throws InvalidSpecException for a malformed rule */
    public static EgressRule deny(String rule) {
        return parse(Action.DENY, rule);
    }

    /**
     * Parses a rule.
     *
     * @throws InvalidSpecException naming the rule and what is wrong with it
     */
    public static EgressRule parse(Action action, String rule) {
        Objects.requireNonNull(action, "action");
        if (rule == null || rule.isBlank()) {
            throw new InvalidSpecException("an egress rule must not be blank");
        }
        String text = rule.trim().toLowerCase(Locale.ROOT);
        String rest = text;
        Scheme scheme = Scheme.TCP;
        int defaultPort = 0;
        int schemeEnd = rest.indexOf("://");
        if (schemeEnd >= 0) {
            switch (rest.substring(0, schemeEnd)) {
                case "http" -> {
                    scheme = Scheme.HTTP;
                    defaultPort = 80;
                }
                case "https" -> {
                    scheme = Scheme.HTTPS;
                    defaultPort = 443;
                }
                case "tcp" -> scheme = Scheme.TCP;
                default -> throw bad(rule, "the scheme must be http, https or tcp");
            }
            rest = rest.substring(schemeEnd + 3);
        }
        if (rest.contains("/") && !rest.matches("\\[?[0-9a-f:.]+/\\d+\\]?(:.*)?")) {
            throw bad(rule, "paths are not part of a rule; write only a host, address or range");
        }
        if (rest.contains("@")) {
            throw bad(rule, "user info is not part of a rule");
        }
        String dest = rest;
        String ports = null;
        if (rest.startsWith("[")) {
            int close = rest.indexOf(']');
            if (close < 0) {
                throw bad(rule, "an IPv6 address opened with '[' must be closed with ']'");
            }
            dest = rest.substring(1, close);
            String after = rest.substring(close + 1);
            if (!after.isEmpty()) {
                if (!after.startsWith(":")) {
                    throw bad(rule, "expected ':' and ports after ']'");
                }
                ports = after.substring(1);
            }
        } else if (rest.chars().filter(c -> c == ':').count() == 1) {
            int colon = rest.indexOf(':');
            dest = rest.substring(0, colon);
            ports = rest.substring(colon + 1);
        } else if (rest.indexOf(':') >= 0 && !rest.matches("[0-9a-f:./]+")) {
            throw bad(rule, "write an IPv6 address with ports in brackets: [address]:port");
        }
        int from;
        int to;
        boolean both = false;
        if (ports == null || ports.isEmpty()) {
            if (ports != null) {
                throw bad(rule, "':' must be followed by a port, a range or '*'");
            }
            if (action == Action.DENY) {
                from = 1; // a host denied is denied on every port
                to = 65535;
            } else if (defaultPort == 0) {
                from = 80;
                to = 443;
                both = true;
            } else {
                from = defaultPort;
                to = defaultPort;
            }
        } else if (ports.equals("*")) {
            from = 1;
            to = 65535;
        } else {
            int dash = ports.indexOf('-');
            from = port(rule, dash < 0 ? ports : ports.substring(0, dash));
            to = dash < 0 ? from : port(rule, ports.substring(dash + 1));
            if (to < from) {
                throw bad(rule, "the port range ends before it starts");
            }
        }
        String canonical = (scheme == Scheme.TCP ? "" : scheme.name().toLowerCase(Locale.ROOT) + "://") + rest;
        if (dest.indexOf('/') >= 0 || IpRange.isLiteral(dest)) {
            IpRange range;
            try {
                range = IpRange.parse(dest);
            } catch (InvalidSpecException e) {
                throw bad(rule, e.getMessage());
            }
            return new EgressRule(action, canonical, null, false, range, from, to, both, scheme);
        }
        boolean wildcard = dest.startsWith("*.");
        String name = wildcard ? dest.substring(2) : dest;
        if (name.endsWith(".")) {
            name = name.substring(0, name.length() - 1);
        }
        if (dest.equals("*") || name.contains("*")) {
            throw bad(rule, "'*' is allowed only as the first label ('*.example.com'); to allow every host use "
                    + "EgressPolicy.allowAll()");
        }
        String[] labels = name.split("\\.", -1);
        for (String label : labels) {
            if (!LABEL.matcher(label).matches()) {
                throw bad(rule, "'" + dest + "' is not a host name, '*.' pattern, IP address or CIDR range");
            }
        }
        if (wildcard && labels.length < 2) {
            throw bad(rule, "'*." + name + "' is too broad: a pattern needs at least two labels after '*.'");
        }
        return new EgressRule(action, canonical, name, wildcard, null, from, to, both, scheme);
    }

    private static int port(String rule, String p) {
        try {
            int v = Integer.parseInt(p);
            if (v >= 1 && v <= 65535) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw bad(rule, "'" + p + "' is not a port (1 to 65535)");
    }

    private static InvalidSpecException bad(String rule, String why) {
        return new InvalidSpecException("egress rule '" + rule + "': " + why);
    }

    /** Allow or deny. */
    public Action action() {
        return action;
    }

    /** The host name, or {@code *.suffix} pattern, of a rule on names; empty for a rule on addresses. */
    public Optional<String> hostPattern() {
        return name == null ? Optional.empty() : Optional.of(wildcard ? "*." + name : name);
    }

    /** The address range of a rule on addresses; empty for a rule on names. */
    public Optional<IpRange> addressRange() {
        return Optional.ofNullable(range);
    }

    /** Which connections the rule covers. */
    public Scheme scheme() {
        return scheme;
    }

    /** True when the rule covers {@code port}. */
    public boolean coversPort(int port) {
        return bothWebPorts ? port == 80 || port == 443 : port >= fromPort && port <= toPort;
    }

    /** True when the rule covers every port ({@code :*}). */
    public boolean coversAllPorts() {
        return !bothWebPorts && fromPort == 1 && toPort == 65535;
    }

    /** True for a rule on addresses (an IP or CIDR range) rather than names. */
    public boolean isAddressRule() {
        return range != null;
    }

    /** True when the rule covers the target's port and protocol (the destination is matched separately). */
    boolean coversPortAndKind(EgressTarget target) {
        if (scheme != Scheme.TCP && (scheme == Scheme.HTTPS) != target.kind().tunnel()) {
            return false;
        }
        return coversPort(target.port());
    }

    /** True when this is a name rule matching the target's host name on any port and kind. */
    boolean matchesHost(EgressTarget target) {
        if (name == null || target.isAddress()) {
            return false;
        }
        String h = target.host();
        return wildcard ? h.endsWith("." + name) : h.equals(name);
    }

    /** True when this is a name rule matching the target's host name. */
    boolean matchesName(EgressTarget target) {
        return coversPortAndKind(target) && matchesHost(target);
    }

    /** True when this is an address rule containing {@code address}, for the target's port and protocol. */
    boolean matchesAddress(EgressTarget target, InetAddress address) {
        return range != null && coversPortAndKind(target) && range.contains(address);
    }

    /** The rule as written (lower case, trimmed), prefixed with its action. */
    @Override
    public String toString() {
        return action.name().toLowerCase(Locale.ROOT) + " " + text;
    }

    /** The destination part as written, for messages ({@code pypi.org}, {@code *.example.com:8443}). */
    public String destination() {
        return text;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EgressRule r && r.action == action && r.text.equals(text);
    }

    @Override
    public int hashCode() {
        return Objects.hash(action, text);
    }
}
