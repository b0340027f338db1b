package dev.codeexec.network;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A raw client of a gate on the loopback: writes what a test says, reads what the proxy answers. */
final class ProxyClient implements AutoCloseable {

    final Socket socket;
    final InputStream in;
    final OutputStream out;

    ProxyClient(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        in = socket.getInputStream();
        out = socket.getOutputStream();
    }

    ProxyClient send(String text) throws IOException {
        return send(text.getBytes(StandardCharsets.ISO_8859_1));
    }

    ProxyClient send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    /** Reads a response head (to the blank line). */
    String head() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0) {
            b.write(c);
            String s = b.toString(StandardCharsets.ISO_8859_1);
            if (s.endsWith("\r\n\r\n")) {
                return s;
            }
        }
        return b.toString(StandardCharsets.ISO_8859_1);
    }

    byte[] read(int n) throws IOException {
        return in.readNBytes(n);
    }

    /** Everything until the proxy closes the connection. */
    String rest() throws IOException {
        return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    }

    /** CONNECT to {@code authority}; returns the response head. */
    String connect(String authority) throws IOException {
        send("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n");
        return head();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
