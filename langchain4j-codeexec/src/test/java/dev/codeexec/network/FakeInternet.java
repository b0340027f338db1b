package dev.codeexec.network;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * Servers on {@value #ADDRESS} of this host that stand in for hosts on the internet, reached only through the proxy
 * with names a fixed resolver maps to them ({@link #resolver()}): an HTTP server and an HTTPS server (a self-signed
 * certificate made with the JDK's {@code keytool}) answering {@code hello <Host> <path>}, redirecting
 * {@code /redirect?<url>}, answering {@code /upload} with the size of the body and {@code /chunked} in chunks, and
 * serving the files of {@link #files()} under {@code /files/} (a directory by its
 * {@code index.html}); and a TCP echo server
 * counting its connections.
 */
public final class FakeInternet implements AutoCloseable {

    /** The address every stand-in host has. Loopback, hence non-public: policies in tests allow it by address. */
    public static final String ADDRESS = "127.0.0.2";

    private final HttpServer http;
    private final HttpsServer https;
    private final ServerSocket echo;
    private final Path files;
    /** Connections the echo server accepted. */
    public final AtomicInteger echoConnections = new AtomicInteger();
    /** Requests the HTTP and HTTPS servers answered. */
    public final AtomicInteger requests = new AtomicInteger();

    /**
     * Starts the servers.
     *
     * @param workDir a directory for the certificate and the served files
     */
    public FakeInternet(Path workDir) throws Exception {
        files = Files.createDirectories(workDir.resolve("files"));
        http = HttpServer.create(new InetSocketAddress(ADDRESS, 0), 64);
        http.createContext("/", this::handle);
        http.start();
        https = HttpsServer.create(new InetSocketAddress(ADDRESS, 0), 64);
        https.setHttpsConfigurator(new HttpsConfigurator(tls(workDir)));
        https.createContext("/", this::handle);
        https.start();
        echo = new ServerSocket(0, 64, InetAddress.getByName(ADDRESS));
        Thread t = new Thread(this::echoLoop, "fake-internet-echo");
        t.setDaemon(true);
        t.start();
    }

    /** Starts the servers in a new temporary directory. */
    public FakeInternet() throws Exception {
        this(Files.createTempDirectory("fake-internet"));
    }

    private static SSLContext tls(Path dir) throws Exception {
        Path store = dir.resolve("server.p12");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        Process p = new ProcessBuilder(keytool, "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname",
                "secp256r1", "-dname", "CN=allowed.test", "-ext", "SAN=dns:allowed.test,dns:other.test",
                "-validity", "2", "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", "secret",
                "-keypass", "secret").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException("keytool failed: " + out);
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(store.toFile())) {
            ks.load(in, "secret".toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, "secret".toCharArray());
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        return ctx;
    }

    private void handle(HttpExchange ex) throws IOException {
        requests.incrementAndGet();
        String path = ex.getRequestURI().getRawPath();
        try (ex) {
            if (path.equals("/upload")) {
                byte[] got = ex.getRequestBody().readAllBytes();
                byte[] body = ("got " + got.length + " bytes").getBytes(StandardCharsets.UTF_8);
                ex.sendResponseHeaders(200, body.length);
                try (OutputStream o = ex.getResponseBody()) {
                    o.write(body);
                }
                return;
            }
            if (path.equals("/chunked")) {
                ex.sendResponseHeaders(200, 0); // chunked
                try (OutputStream o = ex.getResponseBody()) {
                    for (int i = 0; i < 3; i++) {
                        o.write(("part" + i + ";").getBytes(StandardCharsets.UTF_8));
                        o.flush();
                    }
                }
                return;
            }
            if (path.equals("/redirect")) {
                ex.getResponseHeaders().add("Location", ex.getRequestURI().getRawQuery());
                ex.sendResponseHeaders(302, -1);
                return;
            }
            if (path.startsWith("/files/")) {
                Path f = files.resolve(path.substring("/files/".length())).normalize();
                if (Files.isDirectory(f)) {
                    f = f.resolve("index.html"); // a package index's project page
                }
                if (!f.startsWith(files) || !Files.isRegularFile(f)) {
                    ex.sendResponseHeaders(404, -1);
                    return;
                }
                ex.getResponseHeaders().add("Content-Type", f.toString().endsWith(".html") ? "text/html"
                        : "application/octet-stream");
                ex.sendResponseHeaders(200, Files.size(f));
                try (OutputStream o = ex.getResponseBody()) {
                    Files.copy(f, o);
                }
                return;
            }
            byte[] body = ("hello " + ex.getRequestHeaders().getFirst("Host") + " " + ex.getRequestURI())
                    .getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream o = ex.getResponseBody()) {
                o.write(body);
            }
        }
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
                        // the client went away
                    }
                }, "fake-internet-echo-connection");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    /** The directory served under {@code /files/}. */
    public Path files() {
        return files;
    }

    public int httpPort() {
        return http.getAddress().getPort();
    }

    public int httpsPort() {
        return https.getAddress().getPort();
    }

    public int echoPort() {
        return echo.getLocalPort();
    }

    /**
     * {@code allowed.test}, {@code other.test} and {@code pypi.test} lead to the stand-in servers; {@code rebind.test}
     * resolves to {@code 127.0.0.1} and {@code metadata.test} to {@code 169.254.169.254}, where an allowed name must
     * not lead.
     */
    public static HostResolver resolver() {
        return HostResolver.fixed(Map.of(
                "allowed.test", List.of(ADDRESS),
                "other.test", List.of(ADDRESS),
                "pypi.test", List.of(ADDRESS),
                "rebind.test", List.of("127.0.0.1"),
                "metadata.test", List.of("169.254.169.254")));
    }

    @Override
    public void close() throws IOException {
        http.stop(0);
        https.stop(0);
        echo.close();
    }
}
