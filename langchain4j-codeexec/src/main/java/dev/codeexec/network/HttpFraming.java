package dev.codeexec.network;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The message boundaries of one plain HTTP exchange through the proxy: the request's body (by its
 * {@code Content-Length} or chunks) and the host's response (head, then body by length, chunks or the end of the
 * connection). The proxy carries exactly one request and one response per connection and then ends it, so that a
 * client reusing the connection for another host, or pipelining a second request, cannot slip it past the decision
 * that was made for the first.
 */
final class HttpFraming {

    /** Longest response head, chunk-size line or trailer line accepted. */
    static final int MAX_HEAD = 64 * 1024;

    /** Where carried bytes go (counted against the workspace's budget); false when the connection must end. */
    @FunctionalInterface
    interface Sink {
        boolean send(ByteBuffer bytes) throws IOException;
    }

    /** A channel read through a buffer that may already hold bytes. */
    static final class Source {
        private final ReadableByteChannel channel;
        private final ByteBuffer buf;
        private final Runnable onRead;

        Source(ReadableByteChannel channel, ByteBuffer already, Runnable onRead) {
            this.channel = channel;
            this.buf = ByteBuffer.allocate(Math.max(64 * 1024, already.remaining()));
            this.buf.put(already).flip();
            this.onRead = onRead;
        }

        /** Makes at least one byte available; false at the end of the stream. */
        private boolean more() throws IOException {
            if (buf.hasRemaining()) {
                return true;
            }
            buf.clear();
            int n = channel.read(buf);
            buf.flip();
            if (n > 0) {
                onRead.run();
            }
            return n > 0;
        }

        /** A line ending in CRLF, without it. */
        String line() throws IOException {
            StringBuilder s = new StringBuilder();
            while (true) {
                if (!more()) {
                    throw new EOFException("the message ended inside a line");
                }
                char c = (char) (buf.get() & 0xff);
                if (c == '\n') {
                    if (s.length() == 0 || s.charAt(s.length() - 1) != '\r') {
                        throw new IOException("a bare line feed");
                    }
                    return s.substring(0, s.length() - 1);
                }
                if (s.length() >= MAX_HEAD) {
                    throw new IOException("a line longer than " + MAX_HEAD + " bytes");
                }
                s.append(c);
            }
        }

        /** Copies exactly {@code n} bytes; false when the sink ended the connection. */
        boolean copy(long n, Sink out) throws IOException {
            long left = n;
            while (left > 0) {
                if (!more()) {
                    throw new EOFException("the message ended " + left + " bytes early");
                }
                ByteBuffer slice = buf.slice();
                int take = (int) Math.min(left, slice.remaining());
                slice.limit(take);
                buf.position(buf.position() + take);
                left -= take;
                if (!out.send(slice)) {
                    return false;
                }
            }
            return true;
        }

        /** Copies until the end of the stream. */
        boolean copyToEnd(Sink out) throws IOException {
            while (more()) {
                ByteBuffer slice = buf.slice();
                buf.position(buf.limit());
                if (!out.send(slice)) {
                    return false;
                }
            }
            return true;
        }
    }

    private HttpFraming() {
    }

    /**
     * Carries a message body: {@code length} bytes, or chunks when {@code length} is -1 (sizes, data, trailers).
     *
     * @return false when the sink ended the connection
     */
    static boolean body(Source in, Sink out, long length) throws IOException {
        if (length >= 0) {
            return in.copy(length, out);
        }
        while (true) {
            String sizeLine = in.line();
            if (!send(out, sizeLine + "\r\n")) {
                return false;
            }
            long size = chunkSize(sizeLine);
            if (size == 0) {
                String trailer;
                do {
                    trailer = in.line();
                    if (!send(out, trailer + "\r\n")) {
                        return false;
                    }
                } while (!trailer.isEmpty());
                return true;
            }
            if (!in.copy(size, out)) {
                return false;
            }
            if (!in.line().isEmpty()) {
                throw new IOException("a chunk is longer than its size");
            }
            if (!send(out, "\r\n")) {
                return false;
            }
        }
    }

    private static long chunkSize(String line) throws IOException {
        String hex = line.split(";", 2)[0].trim();
        if (hex.isEmpty() || hex.length() > 15 || !hex.matches("[0-9A-Fa-f]+")) {
            throw new IOException("a bad chunk size");
        }
        return Long.parseLong(hex, 16);
    }

    /**
     * Carries the host's response: interim {@code 1xx} responses, then the final head with {@code Connection: close}
     * in place of the host's connection headers, then its body.
     *
     * @param headRequest true when the request was {@code HEAD} (a response without body)
     * @return false when the sink ended the connection
     */
    static boolean response(Source in, Sink out, boolean headRequest) throws IOException {
        while (true) {
            String status = in.line();
            String[] parts = status.split(" ", 3);
            if (parts.length < 2 || !parts[0].startsWith("HTTP/1.") || !parts[1].matches("\\d{3}")) {
                throw new IOException("the host's response has no status line");
            }
            int code = Integer.parseInt(parts[1]);
            StringBuilder head = new StringBuilder(status).append("\r\n");
            long length = -2;
            boolean chunked = false;
            String line;
            int size = 0;
            while (!(line = in.line()).isEmpty()) {
                size += line.length();
                if (size > MAX_HEAD) {
                    throw new IOException("the host's response head is too long");
                }
                int colon = line.indexOf(':');
                String name = colon < 0 ? "" : line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
                String value = colon < 0 ? "" : line.substring(colon + 1).trim();
                switch (name) {
                    case "connection", "keep-alive", "proxy-connection" -> {
                        continue;
                    }
                    case "content-length" -> {
                        if (!value.matches("\\d{1,18}") || (length >= 0 && length != Long.parseLong(value))) {
                            throw new IOException("the host's response has a bad Content-Length");
                        }
                        length = Long.parseLong(value);
                    }
                    case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).endsWith("chunked");
                    default -> {
                    }
                }
                head.append(line).append("\r\n");
            }
            boolean interim = code >= 100 && code < 200 && code != 101;
            head.append(interim ? "" : "Connection: close\r\n").append("\r\n");
            if (!send(out, head.toString())) {
                return false;
            }
            if (interim) {
                continue;
            }
            if (headRequest || code == 204 || code == 304 || code == 101) {
                return true;
            }
            if (chunked) {
                return body(in, out, -1);
            }
            return length >= 0 ? in.copy(length, out) : in.copyToEnd(out);
        }
    }

    private static boolean send(Sink out, String text) throws IOException {
        return out.send(ByteBuffer.wrap(text.getBytes(StandardCharsets.ISO_8859_1)));
    }
}
