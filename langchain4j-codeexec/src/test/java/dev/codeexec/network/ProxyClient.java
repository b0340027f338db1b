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

    /**
     * True when the proxy ended the connection: an orderly end of stream or a reset, whichever the closing race
     * gives (both mean nothing more comes).
     */
    boolean ended() throws IOException {
        try {
            return in.read() == -1;
        } catch (java.net.SocketException reset) {
            return true;
        }
    }

    /** How many bytes come until the proxy ends the connection (an end of stream or a reset). */
    int drain() throws IOException {
        int n = 0;
        try {
            while (in.read() >= 0) {
                n++;
            }
        } catch (java.net.SocketException reset) {
            // ended
        }
        return n;
    }

    /** Everything until the proxy closes the connection. */
    String rest() throws IOException {
        java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
        byte[] chunk = new byte[8192];
        try {
            int n;
            while ((n = in.read(chunk)) >= 0) {
                b.write(chunk, 0, n);
            }
        } catch (java.net.SocketException reset) {
            // what came before the reset is the answer
        }
        return b.toString(StandardCharsets.ISO_8859_1);
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
