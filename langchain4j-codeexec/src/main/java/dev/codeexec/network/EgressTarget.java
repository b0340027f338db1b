package dev.codeexec.network;

import java.util.Locale;
import java.util.Objects;

/**
 * Where a program asked the proxy to connect: the host exactly as asked (a name, or an IP literal; lower case, no
 * trailing dot, IPv6 without brackets), the port, and how it asked.
 *
 * @param host the host name or IP literal
 * @param port the TCP port, 1 to 65535
 * @param kind how the connection was asked for
 */
public record EgressTarget(String host, int port, Kind kind) {

    /** How a program asked for a connection. */
    public enum Kind {
        /** A plain HTTP request in absolute form ({@code GET http://host/...}); decided on the request's host. */
        HTTP,
        /** An HTTP {@code CONNECT} tunnel (HTTPS and anything else over TCP). */
        CONNECT,
        /** A SOCKS5 {@code CONNECT}. */
        SOCKS;

        /** True for the two tunnel kinds, whose bytes the proxy passes on without reading them. */
        public boolean tunnel() {
            return this != HTTP;
        }
    }

    public EgressTarget {
        Objects.requireNonNull(kind, "kind");
        host = normalize(host);
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is out of range");
        }
    }

    /** Lower case, brackets and one trailing dot removed. */
    static String normalize(String host) {
        String h = Objects.requireNonNull(host, "host").trim().toLowerCase(Locale.ROOT);
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        if (h.endsWith(".")) {
            h = h.substring(0, h.length() - 1);
        }
        return h;
    }

    /** True when the host is an IP literal. */
    public boolean isAddress() {
        return IpRange.isLiteral(host);
    }

    /** {@code host:port}, IPv6 in brackets. */
    public String authority() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    @Override
    public String toString() {
        return authority();
    }
}
