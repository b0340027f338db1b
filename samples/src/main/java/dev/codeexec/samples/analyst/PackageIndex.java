package dev.codeexec.samples.analyst;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.network.HostResolver;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * The sample's own package index, so that the network step stays offline: a PEP 503 "simple" index on this host's
 * loopback interface that serves one pure-Python wheel, {@value #PACKAGE}, built in memory. Programs reach it as
 * {@code http://}{@value #HOST}{@code :<port>/simple/}: the engine's egress proxy resolves {@value #HOST} to
 * {@code 127.0.0.1} with {@link HostResolver#fixed}, and the policy allows that name and that one port of this host.
 */
final class PackageIndex implements AutoCloseable {

    /** The name programs use for the index. */
    static final String HOST = "pypi.local";
    static final String PACKAGE = "tinystats";
    static final String VERSION = "0.1.0";
    static final String WHEEL = PACKAGE + "-" + VERSION + "-py3-none-any.whl";

    private final HttpServer server;
    private final ExecutorService threads;
    private final byte[] wheel;

    private PackageIndex(HttpServer server, ExecutorService threads, byte[] wheel) {
        this.server = server;
        this.threads = threads;
        this.wheel = wheel;
    }

    /** Starts the index on a free port of {@code 127.0.0.1}. */
    static PackageIndex start() {
        byte[] wheel = wheel();
        try {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
            ExecutorService threads = Executors.newFixedThreadPool(2, r -> {
                Thread t = new Thread(r, "sample-package-index");
                t.setDaemon(true);
                return t;
            });
            server.setExecutor(threads);
            PackageIndex index = new PackageIndex(server, threads, wheel);
            server.createContext("/", index::handle);
            server.start();
            return index;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the sample's package index on 127.0.0.1", e);
        }
    }

    int port() {
        return server.getAddress().getPort();
    }

    /** The index URL programs use: {@code http://pypi.local:<port>/simple/}. */
    String indexUrl() {
        return "http://" + HOST + ":" + port() + "/simple/";
    }

    /**
     * The index by name, and by address: the proxy refuses an allowed name that resolves to a non-public address
     * such as {@code 127.0.0.1} unless a rule names that address too. Nothing else.
     */
    EgressPolicy policy() {
        return EgressPolicy.builder().allow(HOST + ":" + port()).allow("127.0.0.1:" + port()).build();
    }

    /** The proxy's settings: {@value #HOST} resolves to {@code 127.0.0.1}, and no other name resolves. */
    EgressProxy.Builder proxy() {
        return EgressProxy.builder().resolver(HostResolver.fixed(Map.of(HOST, List.of("127.0.0.1"))));
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            if (!exchange.getRequestMethod().equals("GET") && !exchange.getRequestMethod().equals("HEAD")) {
                send(exchange, 405, "text/plain", "GET only".getBytes(StandardCharsets.UTF_8));
            } else if (path.equals("/simple/")) {
                send(exchange, 200, "text/html", page("<a href=\"" + PACKAGE + "/\">" + PACKAGE + "</a>"));
            } else if (path.equals("/simple/" + PACKAGE + "/")) {
                send(exchange, 200, "text/html", page("<a href=\"/packages/" + WHEEL + "#sha256="
                        + HexFormat.of().formatHex(sha256(wheel)) + "\">" + WHEEL + "</a>"));
            } else if (path.equals("/packages/" + WHEEL)) {
                send(exchange, 200, "application/octet-stream", wheel);
            } else {
                send(exchange, 404, "text/plain", ("not found: " + path).getBytes(StandardCharsets.UTF_8));
            }
        }
    }

    private static byte[] page(String links) {
        return ("<!DOCTYPE html>\n<html><body>\n" + links + "\n</body></html>\n").getBytes(StandardCharsets.UTF_8);
    }

    private static void send(HttpExchange exchange, int status, String type, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", type);
        boolean head = exchange.getRequestMethod().equals("HEAD");
        exchange.sendResponseHeaders(status, head ? -1 : body.length);
        if (!head) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    /**
     * The wheel: the module, and the {@code .dist-info} files pip reads (METADATA, WHEEL, and RECORD with each
     * file's hash).
     */
    static byte[] wheel() {
        String info = PACKAGE + "-" + VERSION + ".dist-info/";
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put(PACKAGE + "/__init__.py", resource("tinystats.py"));
        files.put(info + "METADATA", ("Metadata-Version: 2.1\nName: " + PACKAGE + "\nVersion: " + VERSION
                + "\nSummary: Descriptive statistics in plain Python (the codeexec sample's own package)\n")
                .getBytes(StandardCharsets.UTF_8));
        files.put(info + "WHEEL", ("Wheel-Version: 1.0\nGenerator: codeexec-sample\nRoot-Is-Purelib: true\n"
                + "Tag: py3-none-any\n").getBytes(StandardCharsets.UTF_8));
        StringBuilder record = new StringBuilder();
        files.forEach((name, bytes) -> record.append(name).append(",sha256=")
                .append(Base64.getUrlEncoder().withoutPadding().encodeToString(sha256(bytes))).append(',')
                .append(bytes.length).append('\n'));
        record.append(info).append("RECORD,,\n");
        files.put(info + "RECORD", record.toString().getBytes(StandardCharsets.UTF_8));

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
            for (Map.Entry<String, byte[]> f : files.entrySet()) {
                ZipEntry e = new ZipEntry(f.getKey());
                e.setTime(315619200000L); // 1980-01-02, near the zip format's first day: the same bytes every run
                zip.putNextEntry(e);
                zip.write(f.getValue());
                zip.closeEntry();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] resource(String name) {
        try (InputStream in = PackageIndex.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
