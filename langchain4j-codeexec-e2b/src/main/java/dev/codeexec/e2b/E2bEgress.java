package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressRule;
import dev.codeexec.network.IpRange;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * An {@link EgressPolicy} as E2B's own egress controls, sent when a sandbox is created ({@code NewSandbox}):
 * {@code allow_internet_access} and {@code network.allowOut} / {@code network.denyOut}. E2B enforces them in its
 * firewall; nothing of ours sits between a program and the internet.
 *
 * <p>E2B's rules differ from ours: an allow entry wins over a deny entry; names can only be allowed, and only for
 * HTTP on port 80 (the {@code Host} header) and TLS on 443 (SNI); an allowed address is allowed on every port and
 * protocol; deny entries take IPv4 addresses and ranges only. So the mapping is:
 * <ul>
 *   <li>allow rules on names, written without ports ({@code pypi.org}, {@code *.pythonhosted.org}: ports 80 and
 *       443): {@code allowOut}, as the name or pattern;</li>
 *   <li>allow rules on IPv4 addresses written for every port ({@code 1.2.3.0/24:*}): {@code allowOut};</li>
 *   <li>deny rules on IPv4 addresses, any ports: {@code denyOut} (E2B denies them on every port and protocol, a
 *       stricter rule than asked for);</li>
 *   <li>hosts no rule allows: {@code 0.0.0.0/0} in {@code denyOut}, behind the allow entries; a policy allowing
 *       nothing is {@code allow_internet_access: false} with that one deny entry;</li>
 *   <li>a deny-list policy ({@link EgressPolicy.Builder#allowOthers()}): its deny ranges and the IPv4 ranges of
 *       {@link IpRange#NON_PUBLIC} in {@code denyOut}; its allow rules on names add nothing (every public name is
 *       allowed already) and are left out.</li>
 * </ul>
 * Rules E2B cannot hold as written are refused with {@link UnsupportedCapabilityException} naming the rule, before
 * any sandbox exists, rather than widened: deny rules on names, allow rules on names restricted to some ports or a
 * scheme, allow rules on addresses not written for every port, IPv6 rules, deny rules an allow rule overlaps (E2B's
 * allow would win), deny rules beside allowed names (E2B dials an allowed name itself and checks its addresses
 * against its own private ranges only), and narrowed policies ({@link EgressPolicy#narrowedBy}).
 */
final class E2bEgress {

    /** Every IPv4 address: E2B's {@code ALL_TRAFFIC}, the one range starting at {@code 0.0.0.0} its API accepts. */
    static final String ALL_TRAFFIC = "0.0.0.0/0";

    private final EgressPolicy policy;
    private final List<String> allowOut;
    private final List<String> denyOut;
    private final boolean internet;

    private E2bEgress(EgressPolicy policy, List<String> allowOut, List<String> denyOut, boolean internet) {
        this.policy = policy;
        this.allowOut = List.copyOf(allowOut);
        this.denyOut = List.copyOf(denyOut);
        this.internet = internet;
    }

    /**
     * The policy for an engine's sandboxes, checked against the engine's other settings.
     *
     * @throws InvalidSpecException           with {@code internetAccess(true)}, which says something else
     * @throws UnsupportedCapabilityException for a shared sandbox the engine did not create, and for rules E2B
     *                                        cannot express (see {@link #of})
     */
    static E2bEgress forEngine(EgressPolicy policy, boolean internetAccess, String sharedSandboxId) {
        Objects.requireNonNull(policy, "egress policy");
        if (internetAccess) {
            throw new InvalidSpecException("internetAccess(true) and an egress policy (" + policy + ") are both set: "
                    + "the first allows every host, the second only its rules. Set one; for every public host use "
                    + "EgressPolicy.allowAll()");
        }
        if (sharedSandboxId != null) {
            throw new UnsupportedCapabilityException("an egress policy cannot be held for the shared sandbox '"
                    + sharedSandboxId + "': this engine did not create it, and E2B takes a sandbox's egress rules "
                    + "when it is created. Let the engine create its sandboxes, or set the rules on that sandbox "
                    + "yourself and leave the policy out");
        }
        return of(policy);
    }

    /**
     * The E2B controls for {@code policy}.
     *
     * @throws UnsupportedCapabilityException naming the first rule E2B cannot express and why
     */
    static E2bEgress of(EgressPolicy policy) {
        Objects.requireNonNull(policy, "egress policy");
        requireNotNarrowed(policy);
        boolean others = policy.allowsOthers();
        Set<String> allow = new LinkedHashSet<>();
        List<EgressRule> allowRanges = new ArrayList<>();
        boolean names = false;
        for (EgressRule r : policy.rules()) {
            if (r.action() == EgressRule.Action.ALLOW) {
                if (r.hostPattern().isPresent()) {
                    if (others) {
                        continue; // every public name is allowed already
                    }
                    requireWebPorts(r);
                    names = true;
                    allow.add(r.hostPattern().get());
                } else {
                    IpRange range = ipv4(r);
                    if (!r.coversAllPorts() || r.scheme() != EgressRule.Scheme.TCP) {
                        throw refused(r, "E2B allows an address on every port and protocol, UDP included; write it "
                                + "for every port ('" + range + ":*') if that is meant, or allow the host by name "
                                + "for ports 80 and 443");
                    }
                    allowRanges.add(r);
                    allow.add(range.toString());
                }
            }
        }
        Set<String> deny = new LinkedHashSet<>();
        for (EgressRule r : policy.rules()) {
            if (r.action() != EgressRule.Action.DENY) {
                continue;
            }
            if (r.hostPattern().isPresent()) {
                throw refused(r, "E2B's denyOut takes IP addresses and CIDR ranges only, so a name cannot be "
                        + "denied; allow the names that are wanted instead");
            }
            IpRange range = ipv4(r);
            for (EgressRule a : allowRanges) {
                if (overlap(range, a.addressRange().orElseThrow())) {
                    throw refused(r, "it overlaps the rule '" + a + "', and in E2B an allowed address wins over a "
                            + "denied one, so the denial would not hold");
                }
            }
            if (names) {
                throw refused(r, "E2B connects to a name its allowOut lists itself and checks the address only "
                        + "against its own private ranges, not against denyOut, so an allowed name resolving into "
                        + range + " would still be reached");
            }
            deny.add(range.toString());
        }
        boolean anything = others || !allow.isEmpty();
        if (others) {
            for (IpRange r : IpRange.NON_PUBLIC) {
                if (r.isIpv4() && !r.toString().startsWith("0.0.0.0")) {
                    deny.add(r.toString());
                }
            }
        } else {
            deny.add(ALL_TRAFFIC);
        }
        return new E2bEgress(policy, new ArrayList<>(allow), new ArrayList<>(deny), anything);
    }

    /** Refuses a narrowed policy: its rules are only part of it. */
    private static void requireNotNarrowed(EgressPolicy policy) {
        if (policy.isNarrowed()) {
            throw new UnsupportedCapabilityException("the egress policy '" + policy + "' is narrowed by another "
                    + "(EgressPolicy.narrowedBy), which E2B's allow and deny lists cannot express: give the engine "
                    + "one policy with the rules both allow");
        }
    }

    /** A name rule must cover exactly what E2B's name matching covers: HTTP and TLS on ports 80 and 443. */
    private static void requireWebPorts(EgressRule r) {
        // Ports are either both web ports or one contiguous range: 80 and 443 without 81 means exactly {80, 443}.
        boolean webPorts = r.coversPort(80) && r.coversPort(443) && !r.coversPort(81);
        if (!webPorts || r.scheme() != EgressRule.Scheme.TCP) {
            throw refused(r, "E2B matches names only for HTTP on port 80 and TLS on port 443, both at once, and "
                    + "has no ports or schemes in its rules; write the name without scheme and ports ('"
                    + r.hostPattern().orElseThrow() + "') to allow exactly those two ports");
        }
    }

    /** The rule's range, which must be IPv4 and one E2B's API accepts. */
    private static IpRange ipv4(EgressRule r) {
        IpRange range = r.addressRange().orElseThrow();
        if (!range.isIpv4()) {
            throw refused(r, "E2B's egress firewall filters IPv4 only (its API takes a bare address as /32 and "
                    + "refuses '::/0')");
        }
        String text = range.toString();
        if (text.startsWith("0.0.0.0") && !text.equals(ALL_TRAFFIC)) {
            throw refused(r, "E2B's API refuses ranges starting at the unspecified address 0.0.0.0, except "
                    + ALL_TRAFFIC);
        }
        return range;
    }

    /** True when two IPv4 ranges share an address: the shorter prefix's network contains the other's. */
    static boolean overlap(IpRange a, IpRange b) {
        long[] x = bits(a);
        long[] y = bits(b);
        int prefix = (int) Math.min(x[1], y[1]);
        long mask = prefix == 0 ? 0 : (0xFFFFFFFFL << (32 - prefix)) & 0xFFFFFFFFL;
        return (x[0] & mask) == (y[0] & mask);
    }

    /** An IPv4 range's network as a number and its prefix length, from its text ({@code a.b.c.d[/nn]}). */
    private static long[] bits(IpRange r) {
        String t = r.toString();
        int slash = t.indexOf('/');
        String[] q = (slash < 0 ? t : t.substring(0, slash)).split("\\.");
        long v = 0;
        for (String part : q) {
            v = (v << 8) | Integer.parseInt(part);
        }
        return new long[] {v, slash < 0 ? 32 : Integer.parseInt(t.substring(slash + 1))};
    }

    private static UnsupportedCapabilityException refused(EgressRule r, String why) {
        return new UnsupportedCapabilityException("E2B cannot enforce the egress rule '" + r + "': " + why);
    }

    /** The policy this was made from. */
    EgressPolicy policy() {
        return policy;
    }

    /** {@code network.allowOut}: names, {@code *.} patterns and IPv4 ranges, in the order of their rules. */
    List<String> allowOut() {
        return allowOut;
    }

    /** {@code network.denyOut}: IPv4 ranges; never empty. */
    List<String> denyOut() {
        return denyOut;
    }

    /** {@code allow_internet_access}: false only for a policy that allows nothing. */
    boolean allowInternetAccess() {
        return internet;
    }

    /**
     * Writes {@code allow_internet_access} and {@code network} into a {@code NewSandbox} body, replacing what was
     * there. {@code allow_internet_access} is true whenever something is allowed: false would make E2B replace the
     * deny list with {@code 0.0.0.0/0} (its allow list would still apply), and the lists sent are complete.
     */
    void writeTo(ObjectNode body) {
        body.put("allow_internet_access", internet);
        ObjectNode network = body.putObject("network");
        if (!allowOut.isEmpty()) {
            ArrayNode a = network.putArray("allowOut");
            allowOut.forEach(a::add);
        }
        ArrayNode d = network.putArray("denyOut");
        denyOut.forEach(d::add);
    }

    @Override
    public String toString() {
        return "allowOut " + allowOut + ", denyOut " + denyOut;
    }
}
