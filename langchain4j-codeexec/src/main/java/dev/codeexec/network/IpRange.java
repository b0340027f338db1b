package dev.codeexec.network;

import dev.codeexec.engine.InvalidSpecException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A block of IP addresses written in CIDR form ({@code 10.0.0.0/8}, {@code fc00::/7}) or as one address. An
 * IPv4-mapped IPv6 address ({@code ::ffff:10.0.0.1}) is compared as the IPv4 address it carries, so that a block
 * cannot be stepped around by writing the same host in the other family.
 */
public final class IpRange {

    /**
     * Destinations that are not the public internet: this host, private networks, link-local (cloud metadata at
     * {@code 169.254.169.254}), carrier-grade NAT, documentation and benchmark networks, multicast and reserved space.
     * The proxy refuses them unless an allow rule names an address or range that contains them.
     */
    public static final List<IpRange> NON_PUBLIC = List.of(
            parse("0.0.0.0/8"), parse("10.0.0.0/8"), parse("100.64.0.0/10"), parse("127.0.0.0/8"),
            parse("169.254.0.0/16"), parse("172.16.0.0/12"), parse("192.0.0.0/24"), parse("192.0.2.0/24"),
            parse("192.168.0.0/16"), parse("198.18.0.0/15"), parse("198.51.100.0/24"), parse("203.0.113.0/24"),
            parse("224.0.0.0/4"), parse("240.0.0.0/4"),
            parse("::/128"), parse("::1/128"), parse("64:ff9b:1::/48"), parse("100::/64"), parse("2001:db8::/32"),
            parse("fc00::/7"), parse("fe80::/10"), parse("fec0::/10"), parse("ff00::/8"));

    /** IPv6 ranges that carry an IPv4 address (NAT64, IPv4-compatible, 6to4), and where in the 16 bytes it is. */
    private static final List<IpRange> NAT64 = List.of(parse("64:ff9b::/96"), parse("::/96"));
    private static final IpRange SIX_TO_FOUR = parse("2002::/16");

    private final byte[] network;
    private final int prefix;

    private IpRange(byte[] network, int prefix) {
        this.network = network;
        this.prefix = prefix;
    }

    /**
     * Parses {@code address} or {@code address/prefix}. IPv6 may be written in brackets.
     *
     * @throws InvalidSpecException when it is not an IP address or range
     */
    public static IpRange parse(String text) {
        String t = text == null ? "" : text.trim();
        int slash = t.indexOf('/');
        String addr = slash < 0 ? t : t.substring(0, slash);
        byte[] bytes = literal(addr);
        if (bytes == null) {
            throw new InvalidSpecException("'" + text + "' is not an IP address or CIDR range");
        }
        int max = bytes.length * 8;
        int prefix = max;
        if (slash >= 0) {
            try {
                prefix = Integer.parseInt(t.substring(slash + 1));
            } catch (NumberFormatException e) {
                prefix = -1;
            }
            if (prefix < 0 || prefix > max) {
                throw new InvalidSpecException("'" + text + "' has a bad prefix length (0 to " + max + ")");
            }
        }
        return new IpRange(mask(bytes, prefix), prefix);
    }

    /**
     * The bytes of an IP literal (IPv4 dotted quad, or IPv6 with or without brackets), IPv4-mapped IPv6 as IPv4; null
     * when {@code text} is not a literal. Never looks a name up.
     */
    static byte[] literal(String text) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        String t = text;
        if (t.startsWith("[") && t.endsWith("]")) {
            t = t.substring(1, t.length() - 1);
        }
        if (t.indexOf(':') >= 0) {
            if (t.indexOf('%') >= 0 || !t.matches("[0-9A-Fa-f:.]+")) {
                return null;
            }
        } else {
            // Four decimal octets only, parsed here: InetAddress would look up anything it cannot parse.
            if (!t.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
                return null;
            }
            String[] octets = t.split("\\.");
            byte[] b = new byte[4];
            for (int i = 0; i < 4; i++) {
                int v = Integer.parseInt(octets[i]);
                if (v > 255) {
                    return null;
                }
                b[i] = (byte) v;
            }
            return b;
        }
        try {
            return canonical(InetAddress.getByName(t)).getAddress();
        } catch (UnknownHostException | IllegalArgumentException e) {
            return null;
        }
    }

    /** The address an IP literal stands for (IPv4-mapped IPv6 as IPv4). @throws IllegalArgumentException if none */
    static InetAddress addressOf(String literal) {
        byte[] b = literal(literal);
        if (b == null) {
            throw new IllegalArgumentException("'" + literal + "' is not an IP address");
        }
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /** True when {@code host} is an IP literal rather than a name. */
    public static boolean isLiteral(String host) {
        return literal(host) != null;
    }

    /** The address itself, or the IPv4 address an IPv4-mapped IPv6 address carries. */
    static InetAddress canonical(InetAddress a) {
        if (a instanceof Inet6Address) {
            byte[] b = a.getAddress();
            boolean mapped = true;
            for (int i = 0; i < 10; i++) {
                mapped &= b[i] == 0;
            }
            mapped &= b[10] == (byte) 0xff && b[11] == (byte) 0xff;
            if (mapped) {
                try {
                    return InetAddress.getByAddress(Arrays.copyOfRange(b, 12, 16));
                } catch (UnknownHostException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return a;
    }

    /** True when the block contains {@code address}. */
    public boolean contains(InetAddress address) {
        byte[] b = canonical(address).getAddress();
        return b.length == network.length && Arrays.equals(mask(b, prefix), network);
    }

    /**
     * True when {@code address} is not on the public internet (see {@link #NON_PUBLIC}), or is an IPv6 address that
     * carries a non-public IPv4 address (NAT64 {@code 64:ff9b::/96}, IPv4-compatible {@code ::/96}, 6to4
     * {@code 2002::/16}), which a translating network would deliver there.
     */
    public static boolean isNonPublic(InetAddress address) {
        for (IpRange r : NON_PUBLIC) {
            if (r.contains(address)) {
                return true;
            }
        }
        InetAddress embedded = embeddedIpv4(address);
        return embedded != null && isNonPublic(embedded);
    }

    private static InetAddress embeddedIpv4(InetAddress address) {
        byte[] b = address.getAddress();
        if (b.length != 16) {
            return null;
        }
        int from = -1;
        for (IpRange r : NAT64) {
            if (r.contains(address)) {
                from = 12;
            }
        }
        if (SIX_TO_FOUR.contains(address)) {
            from = 2;
        }
        if (from < 0) {
            return null;
        }
        try {
            return InetAddress.getByAddress(Arrays.copyOfRange(b, from, from + 4));
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** True for an IPv4 block. */
    public boolean isIpv4() {
        return network.length == 4;
    }

    private static byte[] mask(byte[] bytes, int prefix) {
        byte[] out = bytes.clone();
        for (int i = 0; i < out.length; i++) {
            int bits = Math.max(0, Math.min(8, prefix - i * 8));
            out[i] = (byte) (out[i] & (0xff00 >> bits));
        }
        return out;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IpRange r && r.prefix == prefix && Arrays.equals(r.network, network);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(network) * 31 + prefix;
    }

    @Override
    public String toString() {
        try {
            String a = InetAddress.getByAddress(network).getHostAddress().toLowerCase(Locale.ROOT);
            return prefix == network.length * 8 ? a : a + "/" + prefix;
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
