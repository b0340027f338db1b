package dev.codeexec.network;

import java.io.EOFException;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The first request a program sends the proxy, read and checked before anything is decided: an HTTP {@code CONNECT},
 * a plain HTTP request in absolute form, or a SOCKS5 greeting and {@code CONNECT} (told apart by the first byte:
 * {@code 0x05} is SOCKS5). Also writes the protocol's answers: established, or refused with a message.
 *
 * <p>Strict on purpose, since a lenient parser is where smuggling starts: a head longer than {@value #MAX_HEAD}
 * bytes, a bare line feed, a header without a colon, both {@code Content-Length} and {@code Transfer-Encoding}, two
 * {@code Content-Length}s, an {@code Upgrade} on plain HTTP, an {@code https://} URL in absolute form, or a
 * {@code Host} header naming another host than the URL are all refused before any connection is made.
 *
 * @param target      where the program asked to go
 * @param upstream    bytes to send the host first: for plain HTTP the rewritten request head (origin form,
 *                    {@code Connection: close}, proxy headers removed); for a tunnel what the program sent after its
 *                    request
 * @param body        plain HTTP: what the program sent after its head (the start of the body), to be read before
 *                    the connection; empty for a tunnel
 * @param bodyLength  plain HTTP: the request body's length, -1 for chunks; 0 for a tunnel
 * @param headRequest plain HTTP: true for {@code HEAD}, whose response has no body
 */
record ProxyRequest(EgressTarget target, ByteBuffer upstream, ByteBuffer body, long bodyLength,
                    boolean headRequest) {

    /** A tunnel request. */
    ProxyRequest(EgressTarget target, ByteBuffer upstream) {
        this(target, upstream, ByteBuffer.allocate(0), 0, false);
    }

    /** Longest request head accepted. */
    static final int MAX_HEAD = 16 * 1024;

    static final byte SOCKS_VERSION = 5;
    static final int SOCKS_NOT_ALLOWED = 2;
    static final int SOCKS_HOST_UNREACHABLE = 4;
    static final int SOCKS_GENERAL_FAILURE = 1;
    static final int SOCKS_COMMAND_NOT_SUPPORTED = 7;
    static final int SOCKS_ADDRESS_NOT_SUPPORTED = 8;

    /** A request the proxy refuses to parse; carries the protocol's refusal. */
    static final class Malformed extends IOException {
        final EgressTarget.Kind kind;
        final int socksCode;

        Malformed(EgressTarget.Kind kind, int socksCode, String message) {
            super(message);
            this.kind = kind;
            this.socksCode = socksCode;
        }
    }

    /**
     * Reads the request.
     *
     * @throws Malformed    when the request breaks the rules above (the caller answers with its refusal)
     * @throws IOException  when the program closed the connection or it failed
     */
    static ProxyRequest read(ByteChannel client) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(MAX_HEAD);
        fill(client, buf, 1);
        if (buf.get(0) == SOCKS_VERSION) {
            return readSocks(client, buf);
        }
        return readHttp(client, buf);
    }

    private static void fill(ByteChannel ch, ByteBuffer buf, int atLeast) throws IOException {
        while (buf.position() < atLeast) {
            if (!buf.hasRemaining()) {
                throw new IOException("buffer full");
            }
            if (ch.read(buf) < 0) {
                throw new EOFException("the program closed the connection before its request was complete");
            }
        }
    }

    // ---- SOCKS5 (RFC 1928), no authentication, CONNECT only --------------------------------------------------------

    private static ProxyRequest readSocks(ByteChannel ch, ByteBuffer buf) throws IOException {
        fill(ch, buf, 2);
        int methods = buf.get(1) & 0xff;
        fill(ch, buf, 2 + methods);
        boolean noAuth = false;
        for (int i = 0; i < methods; i++) {
            noAuth |= buf.get(2 + i) == 0;
        }
        if (!noAuth) {
            write(ch, new byte[] {SOCKS_VERSION, (byte) 0xff});
            throw new EOFException("the SOCKS5 client offers no method without authentication");
        }
        write(ch, new byte[] {SOCKS_VERSION, 0});
        int start = 2 + methods;
        fill(ch, buf, start + 5);
        int cmd = buf.get(start + 1) & 0xff;
        int atyp = buf.get(start + 3) & 0xff;
        if (buf.get(start) != SOCKS_VERSION) {
            throw new Malformed(EgressTarget.Kind.SOCKS, SOCKS_GENERAL_FAILURE, "bad SOCKS version in the request");
        }
        if (cmd != 1) {
            throw new Malformed(EgressTarget.Kind.SOCKS, SOCKS_COMMAND_NOT_SUPPORTED, "SOCKS5 command " + cmd
                    + " is not supported: only CONNECT (no UDP, no BIND)");
        }
        String host;
        int portAt;
        if (atyp == 1 || atyp == 4) {
            int len = atyp == 1 ? 4 : 16;
            fill(ch, buf, start + 4 + len + 2);
            byte[] a = new byte[len];
            buf.get(start + 4, a);
            host = java.net.InetAddress.getByAddress(a).getHostAddress();
            portAt = start + 4 + len;
        } else if (atyp == 3) {
            int len = buf.get(start + 4) & 0xff;
            fill(ch, buf, start + 5 + len + 2);
            byte[] n = new byte[len];
            buf.get(start + 5, n);
            host = new String(n, StandardCharsets.US_ASCII);
            portAt = start + 5 + len;
        } else {
            throw new Malformed(EgressTarget.Kind.SOCKS, SOCKS_ADDRESS_NOT_SUPPORTED, "unknown SOCKS5 address type");
        }
        int port = ((buf.get(portAt) & 0xff) << 8) | (buf.get(portAt + 1) & 0xff);
        EgressTarget target = target(EgressTarget.Kind.SOCKS, host, port);
        return new ProxyRequest(target, rest(buf, portAt + 2));
    }

    // ---- HTTP/1.1 proxy requests ----------------------------------------------------------------------------------

    private static ProxyRequest readHttp(ByteChannel ch, ByteBuffer buf) throws IOException {
        int end;
        while ((end = headEnd(buf)) < 0) {
            if (!buf.hasRemaining()) {
                throw new Malformed(EgressTarget.Kind.HTTP, 0, "the request head is longer than " + MAX_HEAD
                        + " bytes");
            }
            if (ch.read(buf) < 0) {
                throw new EOFException("the program closed the connection before its request head was complete");
            }
        }
        String head = new String(buf.array(), 0, end, StandardCharsets.ISO_8859_1);
        String[] lines = head.split("\r\n", -1);
        for (String line : lines) {
            if (line.indexOf('\n') >= 0 || line.indexOf('\r') >= 0) {
                throw malformed("a bare CR or LF in the request head");
            }
        }
        String[] requestLine = lines[0].split(" ", -1);
        if (requestLine.length != 3 || !requestLine[2].matches("HTTP/1\\.[01]")) {
            throw malformed("the request line is not 'METHOD target HTTP/1.x'");
        }
        String method = requestLine[0];
        List<String[]> headers = new ArrayList<>();
        for (int i = 1; i < lines.length - 2; i++) {
            int colon = lines[i].indexOf(':');
            if (colon <= 0 || lines[i].charAt(0) == ' ' || lines[i].charAt(0) == '\t'
                    || lines[i].substring(0, colon).contains(" ")) {
                throw malformed("a malformed header line");
            }
            headers.add(new String[] {lines[i].substring(0, colon).trim(), lines[i].substring(colon + 1).trim()});
        }
        if (method.equals("CONNECT")) {
            String authority = requestLine[1];
            int colon = authority.lastIndexOf(':');
            if (colon <= 0 || authority.endsWith("]")) {
                throw new Malformed(EgressTarget.Kind.CONNECT, 0, "CONNECT needs host:port");
            }
            return new ProxyRequest(target(EgressTarget.Kind.CONNECT, authority.substring(0, colon),
                    port(EgressTarget.Kind.CONNECT, authority.substring(colon + 1))), rest(buf, end));
        }
        URI uri;
        try {
            uri = new URI(requestLine[1]);
        } catch (URISyntaxException e) {
            throw malformed("the request target is not a URL");
        }
        if (uri.getScheme() == null || uri.getRawAuthority() == null) {
            throw malformed("this is a proxy: send absolute URLs (http://host/path), or CONNECT for HTTPS");
        }
        if (!uri.getScheme().equalsIgnoreCase("http")) {
            throw malformed("only http:// URLs are forwarded as requests; use CONNECT for " + uri.getScheme());
        }
        if (uri.getHost() == null || uri.getRawUserInfo() != null) {
            throw malformed("the URL has no host, or has user info");
        }
        EgressTarget target = target(EgressTarget.Kind.HTTP, uri.getHost(), uri.getPort() < 0 ? 80 : uri.getPort());
        StringBuilder out = new StringBuilder();
        String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        out.append(method).append(' ').append(path);
        if (uri.getRawQuery() != null) {
            out.append('?').append(uri.getRawQuery());
        }
        out.append(' ').append(requestLine[2]).append("\r\n");
        int contentLength = 0;
        long length = 0;
        boolean chunked = false;
        boolean host = false;
        for (String[] h : headers) {
            String name = h[0].toLowerCase(Locale.ROOT);
            switch (name) {
                case "host" -> {
                    if (host || !EgressTarget.normalize(hostOf(h[1])).equals(target.host())) {
                        throw new Malformed(EgressTarget.Kind.HTTP, 0, "the Host header names another host than "
                                + "the URL (" + target.host() + ")");
                    }
                    host = true;
                }
                case "content-length" -> {
                    contentLength++;
                    if (!h[1].matches("\\d{1,18}")) {
                        throw malformed("a bad Content-Length");
                    }
                    length = Long.parseLong(h[1]);
                }
                case "transfer-encoding" -> {
                    if (chunked || !h[1].equalsIgnoreCase("chunked")) {
                        throw malformed("only one Transfer-Encoding, chunked, is forwarded");
                    }
                    chunked = true;
                }
                case "upgrade" -> throw malformed("Upgrade is not forwarded on plain HTTP; use a tunnel (wss://)");
                case "connection", "proxy-connection", "keep-alive", "proxy-authorization", "te" -> {
                    continue;
                }
                default -> {
                }
            }
            if (!name.equals("host")) {
                out.append(h[0]).append(": ").append(h[1]).append("\r\n");
            }
        }
        if (contentLength > 1 || (contentLength == 1 && chunked)) {
            throw malformed("a request with two lengths (Content-Length and Transfer-Encoding, or two "
                    + "Content-Lengths) is refused");
        }
        String authority = target.host().indexOf(':') >= 0 ? "[" + target.host() + "]" : target.host();
        out.insert(out.indexOf("\r\n") + 2, "Host: " + authority + (target.port() == 80 ? "" : ":" + target.port())
                + "\r\n");
        out.append("Connection: close\r\n\r\n");
        return new ProxyRequest(target, ByteBuffer.wrap(out.toString().getBytes(StandardCharsets.ISO_8859_1)),
                rest(buf, end), chunked ? -1 : length, method.equals("HEAD"));
    }

    private static String hostOf(String hostHeader) {
        String h = hostHeader.trim();
        if (h.startsWith("[")) {
            int close = h.indexOf(']');
            return close < 0 ? h : h.substring(0, close + 1);
        }
        int colon = h.lastIndexOf(':');
        return colon < 0 ? h : h.substring(0, colon);
    }

    private static Malformed malformed(String message) {
        return new Malformed(EgressTarget.Kind.HTTP, 0, message);
    }

    private static int headEnd(ByteBuffer buf) {
        byte[] a = buf.array();
        for (int i = 3; i < buf.position(); i++) {
            if (a[i] == '\n' && a[i - 1] == '\r' && a[i - 2] == '\n' && a[i - 3] == '\r') {
                return i + 1;
            }
        }
        return -1;
    }

    private static int port(EgressTarget.Kind kind, String text) throws Malformed {
        try {
            int p = Integer.parseInt(text);
            if (p >= 1 && p <= 65535) {
                return p;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw new Malformed(kind, SOCKS_GENERAL_FAILURE, "'" + text + "' is not a port");
    }

    private static EgressTarget target(EgressTarget.Kind kind, String host, int port) throws Malformed {
        String h = EgressTarget.normalize(host);
        if (h.isEmpty() || !h.matches("[a-z0-9._:\\-]+")) {
            throw new Malformed(kind, SOCKS_GENERAL_FAILURE, "'" + host + "' is not a host name or IP address");
        }
        if (port < 1) {
            throw new Malformed(kind, SOCKS_GENERAL_FAILURE, "port 0 is not a destination");
        }
        return new EgressTarget(h, port, kind);
    }

    private static ByteBuffer rest(ByteBuffer buf, int from) {
        ByteBuffer r = ByteBuffer.allocate(buf.position() - from);
        r.put(buf.array(), from, buf.position() - from).flip();
        return r;
    }

    static void write(ByteChannel ch, byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    /** What the program reads when its connection is established. */
    static byte[] established(EgressTarget.Kind kind) {
        return switch (kind) {
            case CONNECT -> "HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
            case SOCKS -> new byte[] {SOCKS_VERSION, 0, 0, 1, 0, 0, 0, 0, 0, 0};
            case HTTP -> new byte[0];
        };
    }

    /**
     * What the program reads when its connection is refused. HTTP: the status, the message as reason phrase (most
     * clients show it: pip, Python, git) and as body, and {@code X-Proxy-Error}. SOCKS5 can only carry a code.
     */
    static byte[] refusal(EgressTarget.Kind kind, int status, int socksCode, String message) {
        if (kind == EgressTarget.Kind.SOCKS) {
            return new byte[] {SOCKS_VERSION, (byte) socksCode, 0, 1, 0, 0, 0, 0, 0, 0};
        }
        String reason = message.replaceAll("[^\\x20-\\x7e]", "?");
        byte[] body = (reason + "\n").getBytes(StandardCharsets.US_ASCII);
        String head = "HTTP/1.1 " + status + " " + reason + "\r\n"
                + "X-Proxy-Error: " + (status == 403 ? "blocked-by-policy" : status == 429 ? "limit-reached"
                        : "bad-request") + "\r\n"
                + "Content-Type: text/plain; charset=us-ascii\r\n"
                + "Content-Length: " + body.length + "\r\n"
                + "Connection: close\r\n\r\n";
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        byte[] out = new byte[h.length + body.length];
        System.arraycopy(h, 0, out, 0, h.length);
        System.arraycopy(body, 0, out, h.length, body.length);
        return out;
    }
}
