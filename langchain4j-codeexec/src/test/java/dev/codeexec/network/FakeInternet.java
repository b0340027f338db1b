package dev.codeexec.network;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Servers on {@value #ADDRESS} that stand in for hosts on the internet: an HTTP server answering with the Host it
 * was asked for, and a TCP echo server counting its connections. Names map to them through a fixed resolver.
 */
final class FakeInternet implements AutoCloseable {

    static final String ADDRESS = "127.0.0.2";

    final HttpServer http;
    final ServerSocket echo;
    final AtomicInteger echoConnections = new AtomicInteger();
    final AtomicInteger httpRequests = new AtomicInteger();

    FakeInternet() throws IOException {
        http = HttpServer.create(new InetSocketAddress(ADDRESS, 0), 16);
        http.createContext("/", ex -> {
            httpRequests.incrementAndGet();
            byte[] body = ("hello " + ex.getRequestHeaders().getFirst("Host") + " " + ex.getRequestURI())
                    .getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(body);
            }
        });
        http.start();
        echo = new ServerSocket(0, 16, java.net.InetAddress.getByName(ADDRESS));
        Thread t = new Thread(this::echoLoop, "fake-internet-echo");
        t.setDaemon(true);
        t.start();
    }

    private void echoLoop() {
        while (!echo.isClosed()) {
            try {
                Socket s = echo.accept();
                echoConnections.incrementAndGet();
                Thread t = new Thread(() -> {
                    try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                        in.transferTo(out);
                    } catch (IOException e) {
                        // the test ended it
                    }
                });
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    int httpPort() {
        return http.getAddress().getPort();
    }

    int echoPort() {
        return echo.getLocalPort();
    }

    /** Names of the fake internet, and names that resolve where they must not lead. */
    static HostResolver resolver() {
        return HostResolver.fixed(Map.of(
                "allowed.test", List.of(ADDRESS),
                "other.test", List.of(ADDRESS),
                "rebind.test", List.of("127.0.0.1"),
                "metadata.test", List.of("169.254.169.254")));
    }

    @Override
    public void close() throws IOException {
        http.stop(0);
        echo.close();
    }
}
