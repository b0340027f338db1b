package dev.codeexec.benchmarks.network;

import dev.codeexec.benchmarks.Stats;
import dev.codeexec.network.EgressGate;
import dev.codeexec.network.EgressLimits;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.network.HostResolver;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The egress proxy against direct loopback connections, measured in the same run. Local servers listen on
 * {@code 127.0.0.2}; the proxy resolves {@code bench.test} to that address, and its policy allows it.
 * <ol>
 *   <li><b>Latency per connection</b>: open a connection, get one 32-byte echo, close. Directly, through a gate on
 *       TCP loopback ({@code CONNECT bench.test:PORT}, up to the {@code 200} line, then the echo), through a gate on
 *       a Unix-domain socket (what sandboxes and containers use), and, where {@code /usr/bin/python3} exists,
 *       through the core's forwarder script ({@code egress-bridge.py}, run on the host) in front of that Unix
 *       gate: the whole path a sandboxed program takes, less the sandbox. Samples alternate between the paths.</li>
 *   <li><b>Throughput</b>: a download of 100 MB from a server that answers a one-line request with 100 MB and
 *       closes, on each path, rounds alternating.</li>
 * </ol>
 * A second reference is a bare relay in this JVM: it accepts, connects to the server and copies bytes both ways,
 * one thread per direction through a 64 KiB heap buffer, as the proxy's tunnels do, with no request, policy or
 * accounting. The gate's distance from it is the proxy's own cost; the relay's distance from direct is what any
 * relay that copies in user space costs on the machine.
 * Usage: {@code network.EgressProxyBenchmark [iterations] [rounds]} (defaults 2000 and 7).
 */
public final class EgressProxyBenchmark {

    private static final String HOST = "bench.test";
    private static final String SERVER_ADDRESS = "127.0.0.2";
    private static final long DOWNLOAD = 100_000_000L;
    private static final int ECHO = 32;
    private static final int WARMUP = 300;
    private static final String PYTHON = "/usr/bin/python3";

    private EgressProxyBenchmark() {
    }

    /** One way to reach a local server: opens a connection that is ready to carry bytes to {@code port}. */
    private interface Opener {
        SocketChannel open(int port) throws IOException;
    }

    private record Route(String name, Opener path) {
    }

    public static void main(String[] args) throws Exception {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 7;
        ExecutorService serverThreads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "bench-server");
            t.setDaemon(true);
            return t;
        });
        Path dir = Files.createTempDirectory("egress-bench");
        Path socket = dir.resolve("gate.sock");
        Process bridge = null;
        ProcessHandle forwarder = null;
        try (ServerSocketChannel echo = listen(serverThreads, EgressProxyBenchmark::echo);
                ServerSocketChannel bulk = listen(serverThreads, EgressProxyBenchmark::download);
                EgressProxy proxy = EgressProxy.builder()
                        .resolver(HostResolver.fixed(Map.of(HOST, List.of(SERVER_ADDRESS))))
                        // Connections are opened one after another, but the proxy ends a closed one on its own
                        // threads: the default of 32 open at once could refuse one that overtakes the cleanup.
                        .limits(EgressLimits.DEFAULT.withMaxConnections(1024))
                        .build()) {
            EgressPolicy policy = EgressPolicy.allowing(HOST + ":*", SERVER_ADDRESS + ":*");
            EgressGate tcpGate = proxy.openLoopback("bench-tcp", policy);
            EgressGate unixGate = proxy.openUnix("bench-unix", policy, socket);
            int gatePort = tcpGate.port();

            List<Route> routes = new ArrayList<>();
            routes.add(new Route("direct", port -> connectTcp(new InetSocketAddress(SERVER_ADDRESS, port))));
            Map<Integer, Integer> relays = Map.of(port(echo), relay(serverThreads, port(echo)), port(bulk),
                    relay(serverThreads, port(bulk)));
            routes.add(new Route("bare Java relay (reference)", port -> connectTcp(
                    new InetSocketAddress(SERVER_ADDRESS, relays.get(port)))));
            routes.add(new Route("gate, TCP loopback", port -> tunnel(
                    connectTcp(new InetSocketAddress("127.0.0.1", gatePort)), port)));
            routes.add(new Route("gate, Unix socket", port -> tunnel(
                    SocketChannel.open(UnixDomainSocketAddress.of(socket)), port)));
            if (Files.isExecutable(Path.of(PYTHON))) {
                int forwarderPort = freePort();
                bridge = startForwarder(dir, forwarderPort, socket);
                forwarder = findForwarder(dir);
                routes.add(new Route("python forwarder + Unix gate", port -> tunnel(
                        connectTcp(new InetSocketAddress("127.0.0.1", forwarderPort)), port)));
            } else {
                System.out.println("(no " + PYTHON + ": the forwarder's path is not measured)");
            }
            int echoPort = port(echo);
            int bulkPort = port(bulk);

            latency(routes, echoPort, iterations);
            System.out.println();
            throughput(routes, bulkPort, rounds);
        } finally {
            if (forwarder != null) {
                forwarder.destroy();
                forwarder.onExit().get(5, TimeUnit.SECONDS);
            }
            if (bridge != null) {
                bridge.destroy();
            }
            serverThreads.shutdownNow();
            Files.deleteIfExists(socket);
            Files.deleteIfExists(dir.resolve("egress-bridge.py"));
            Files.deleteIfExists(dir);
        }
    }

    // ---- latency ---------------------------------------------------------------------------------------------------

    private static void latency(List<Route> routes, int port, int iterations) throws IOException {
        byte[] ping = new byte[ECHO];
        Arrays.fill(ping, (byte) 'p');
        for (int i = 0; i < WARMUP; i++) {
            for (Route r : routes) {
                roundTrip(r, port, ping);
            }
        }
        long[][] samples = new long[routes.size()][iterations];
        for (int i = 0; i < iterations; i++) {
            // Rotate the order too, so that no path always follows the same other one.
            for (int k = 0; k < routes.size(); k++) {
                int j = (i + k) % routes.size();
                samples[j][i] = roundTrip(routes.get(j), port, ping);
            }
        }
        System.out.printf("Connect + one %d-byte echo + close, %d alternating samples per path (after %d warm-up)%n",
                ECHO, iterations, WARMUP);
        System.out.printf("%-30s %10s %10s %10s %14s %14s%n", "path", "median ms", "p95 ms", "p10 ms",
                "added (medians)", "added (paired)");
        Stats direct = new Stats(samples[0]);
        for (int j = 0; j < routes.size(); j++) {
            Stats s = new Stats(samples[j]);
            long[] diff = new long[iterations];
            for (int i = 0; i < iterations; i++) {
                diff[i] = samples[j][i] - samples[0][i];
            }
            Stats d = new Stats(diff);
            System.out.printf("%-30s %10.3f %10.3f %10.3f %14s %14s%n", routes.get(j).name(), ms(s.median()),
                    ms(s.percentile(95)), ms(s.percentile(10)),
                    j == 0 ? "-" : String.format("%+.3f", ms(s.median() - direct.median())),
                    j == 0 ? "-" : String.format("%+.3f", ms(d.median())));
        }
        System.out.println("(added (paired): median over samples of this path's time minus the direct time next to it;"
                + " target for the gate: <= 1 ms)");
    }

    private static long roundTrip(Route r, int port, byte[] ping) throws IOException {
        long t0 = System.nanoTime();
        try (SocketChannel ch = r.path().open(port)) {
            ch.write(ByteBuffer.wrap(ping));
            ByteBuffer back = ByteBuffer.allocate(ping.length);
            while (back.hasRemaining()) {
                if (ch.read(back) < 0) {
                    throw new IOException(r.name() + ": the echo ended early");
                }
            }
            if (!Arrays.equals(back.array(), ping)) {
                throw new IOException(r.name() + ": the echo differs");
            }
        }
        return System.nanoTime() - t0;
    }

    // ---- throughput ------------------------------------------------------------------------------------------------

    private static void throughput(List<Route> routes, int port, int rounds) throws IOException {
        for (Route r : routes) {
            download(r, port); // warm-up
        }
        long[][] samples = new long[routes.size()][rounds];
        for (int i = 0; i < rounds; i++) {
            for (int k = 0; k < routes.size(); k++) {
                int j = (i + k) % routes.size();
                samples[j][i] = download(routes.get(j), port);
            }
        }
        System.out.printf("Download of %d MB (request line, then the server writes and closes), %d alternating rounds"
                + " per path%n", DOWNLOAD / 1_000_000, rounds);
        System.out.printf("%-30s %12s %12s %12s %16s%n", "path", "median MB/s", "min MB/s", "max MB/s",
                "ratio to direct");
        double direct = mbps(median(samples[0]));
        for (int j = 0; j < routes.size(); j++) {
            long[] s = samples[j].clone();
            Arrays.sort(s);
            double m = mbps(median(s));
            System.out.printf("%-30s %12.0f %12.0f %12.0f %16s%n", routes.get(j).name(), m, mbps(s[s.length - 1]),
                    mbps(s[0]), j == 0 ? "-" : String.format("%.2f", m / direct));
        }
        System.out.println("(ratio: median MB/s of the path over the direct median; target for the gate: >= 0.8)");
    }

    private static long download(Route r, int port) throws IOException {
        long t0 = System.nanoTime();
        long total = 0;
        try (SocketChannel ch = r.path().open(port)) {
            ch.write(ByteBuffer.wrap("GET\r\n".getBytes(StandardCharsets.US_ASCII)));
            ByteBuffer buf = ByteBuffer.allocateDirect(64 * 1024);
            int n;
            while ((n = ch.read(buf)) >= 0) {
                total += n;
                buf.clear();
            }
        }
        long t = System.nanoTime() - t0;
        if (total != DOWNLOAD) {
            throw new IOException(r.name() + ": downloaded " + total + " bytes, not " + DOWNLOAD);
        }
        return t;
    }

    private static long median(long[] v) {
        long[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private static double mbps(long nanos) {
        return DOWNLOAD / 1e6 / (nanos / 1e9);
    }

    private static double ms(double micros) {
        return micros / 1000.0;
    }

    // ---- clients ---------------------------------------------------------------------------------------------------

    private static SocketChannel connectTcp(SocketAddress a) throws IOException {
        SocketChannel ch = SocketChannel.open();
        try {
            ch.socket().setTcpNoDelay(true);
            ch.connect(a);
            return ch;
        } catch (IOException e) {
            ch.close();
            throw e;
        }
    }

    /** Asks the proxy behind {@code ch} for a tunnel to the bench host and reads its answer up to the blank line. */
    private static SocketChannel tunnel(SocketChannel ch, int port) throws IOException {
        try {
            String authority = HOST + ":" + port;
            ch.write(ByteBuffer.wrap(("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII)));
            // Byte by byte up to the blank line: nothing of the tunnel's own bytes may be taken with the head.
            ByteBuffer one = ByteBuffer.allocate(1);
            StringBuilder head = new StringBuilder();
            while (head.length() < 4 || !head.substring(head.length() - 4).equals("\r\n\r\n")) {
                one.clear();
                if (ch.read(one) < 0) {
                    throw new IOException("the proxy closed the connection: " + head);
                }
                head.append((char) one.get(0));
                if (head.length() > 4096) {
                    throw new IOException("the proxy's answer is too long");
                }
            }
            if (!head.toString().startsWith("HTTP/1.1 200")) {
                throw new IOException("the proxy refused the tunnel: " + head.toString().strip());
            }
            return ch;
        } catch (IOException e) {
            ch.close();
            throw e;
        }
    }

    // ---- servers ---------------------------------------------------------------------------------------------------

    private interface Handler {
        void handle(SocketChannel ch) throws IOException;
    }

    private static ServerSocketChannel listen(ExecutorService threads, Handler handler) throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.INET);
        server.bind(new InetSocketAddress(SERVER_ADDRESS, 0), 256);
        threads.execute(() -> {
            while (server.isOpen()) {
                SocketChannel ch;
                try {
                    ch = server.accept();
                } catch (IOException e) {
                    return;
                }
                threads.execute(() -> {
                    try (ch) {
                        ch.socket().setTcpNoDelay(true);
                        handler.handle(ch);
                    } catch (IOException e) {
                        // the client went away
                    }
                });
            }
        });
        return server;
    }

    /** A bare relay to {@code target}: the reference for a copying relay without the proxy's work. */
    private static int relay(ExecutorService threads, int target) throws IOException {
        return port(listen(threads, client -> {
            try (SocketChannel server = connectTcp(new InetSocketAddress(SERVER_ADDRESS, target))) {
                CompletableFuture<Void> down = CompletableFuture.runAsync(() -> copy(server, client), threads);
                copy(client, server);
                down.join();
            }
        }));
    }

    private static void copy(SocketChannel from, SocketChannel to) {
        ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
        try {
            while (true) {
                buf.clear();
                if (from.read(buf) < 0) {
                    break;
                }
                buf.flip();
                while (buf.hasRemaining()) {
                    to.write(buf);
                }
            }
            to.shutdownOutput();
        } catch (IOException e) {
            // the other side went away
        }
    }

    private static int port(ServerSocketChannel server) throws IOException {
        return ((InetSocketAddress) server.getLocalAddress()).getPort();
    }

    /** Echoes until the client is done. */
    private static void echo(SocketChannel ch) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(4096);
        while (ch.read(buf) >= 0) {
            buf.flip();
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            buf.clear();
        }
    }

    /** Reads a request line, then writes {@link #DOWNLOAD} bytes and closes. */
    private static void download(SocketChannel ch) throws IOException {
        ByteBuffer in = ByteBuffer.allocate(256);
        while (true) {
            if (ch.read(in) < 0) {
                return;
            }
            String line = new String(in.array(), 0, in.position(), StandardCharsets.US_ASCII);
            if (line.contains("\n")) {
                break;
            }
            if (!in.hasRemaining()) {
                return;
            }
        }
        ByteBuffer chunk = ByteBuffer.allocateDirect(64 * 1024);
        long left = DOWNLOAD;
        while (left > 0) {
            chunk.clear();
            chunk.limit((int) Math.min(chunk.capacity(), left));
            while (chunk.hasRemaining()) {
                left -= ch.write(chunk);
            }
        }
        ch.shutdownOutput();
    }

    // ---- the in-sandbox forwarder, run on the host -----------------------------------------------------------------

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    /** Starts the core's forwarder without a program: it prints "ready" and leaves a forwarder process listening. */
    private static Process startForwarder(Path dir, int port, Path socket) throws IOException, InterruptedException {
        Path script = dir.resolve("egress-bridge.py");
        try (InputStream in = EgressGate.class.getResourceAsStream("/dev/codeexec/network/egress-bridge.py")) {
            if (in == null) {
                throw new IllegalStateException("egress-bridge.py is not on the class path");
            }
            Files.write(script, in.readAllBytes());
        }
        Process p = new ProcessBuilder(PYTHON, "-I", "-S", script.toString(), Integer.toString(port),
                socket.toString(), "-", "--").redirectErrorStream(true).start();
        String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))
                .readLine();
        if (!"ready".equals(line) || !p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroy();
            throw new IllegalStateException("the forwarder did not start: " + line);
        }
        return p;
    }

    /** The forwarder process left running (detached, so not a descendant): the one running this run's script. */
    private static ProcessHandle findForwarder(Path dir) {
        String script = dir.resolve("egress-bridge.py").toString();
        Optional<ProcessHandle> found = ProcessHandle.allProcesses()
                .filter(h -> h.info().arguments().map(a -> Arrays.asList(a).contains(script)).orElse(false))
                .min(Comparator.comparing(h -> h.info().startInstant().orElse(null),
                        Comparator.nullsLast(Comparator.naturalOrder())));
        return found.orElseThrow(() -> new IllegalStateException("the forwarder process cannot be found"));
    }
}
