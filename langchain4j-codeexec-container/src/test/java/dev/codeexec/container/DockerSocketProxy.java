package dev.codeexec.container;

import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A UNIX socket in front of the host's Docker socket, forwarding every connection, that a test can cut: all open
 * connections ({@link #cutConnections()}, as a broken stream), or everything including the listener
 * ({@link #stop()}, as a Docker engine that died). It also counts the requests whose text holds a given string
 * ({@link #count(String)}), such as the archive endpoint's path.
 */
final class DockerSocketProxy implements AutoCloseable {

    private final Path socket;
    private final Path upstream;
    private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();
    private volatile ServerSocketChannel listener;
    /** What requests are counted by, and how many held it. */
    private final java.util.Map<String, java.util.concurrent.atomic.AtomicInteger> counted = new ConcurrentHashMap<>();

    private DockerSocketProxy(Path socket, Path upstream) {
        this.socket = socket;
        this.upstream = upstream;
    }

    /** Skips (fails in strict mode) when the host engine is not on a local UNIX socket. */
    static DockerSocketProxy start(Path dir) throws IOException {
        String host = System.getenv().getOrDefault("DOCKER_HOST", "unix:///var/run/docker.sock");
        Requirements.require(host.startsWith("unix://") && Files.exists(Path.of(host.substring(7))),
                "the Docker engine on a local UNIX socket");
        DockerSocketProxy p = new DockerSocketProxy(dir.resolve("proxy.sock"), Path.of(host.substring(7)));
        p.listen();
        return p;
    }

    String dockerHost() {
        return "unix://" + socket;
    }

    /** (Again) accepts connections. */
    synchronized void listen() throws IOException {
        Files.deleteIfExists(socket);
        ServerSocketChannel l = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        l.bind(UnixDomainSocketAddress.of(socket));
        listener = l;
        Thread t = new Thread(() -> accept(l), "docker-proxy-accept");
        t.setDaemon(true);
        t.start();
    }

    private void accept(ServerSocketChannel l) {
        while (l.isOpen()) {
            try {
                SocketChannel in = l.accept();
                SocketChannel out = SocketChannel.open(UnixDomainSocketAddress.of(upstream));
                open.add(in);
                open.add(out);
                pump(in, out, true);
                pump(out, in, false);
            } catch (IOException e) {
                return;
            }
        }
    }

    /**
     * Counts, from now on, the client's bytes that hold {@code needle} (a request line's path, as
     * {@code /archive?path=}); what is counted is read with {@link #requests(String)}.
     */
    void count(String needle) {
        counted.put(needle, new java.util.concurrent.atomic.AtomicInteger());
    }

    /** How often the needle occurred in what clients sent since {@link #count(String)}. */
    int requests(String needle) {
        return counted.get(needle).get();
    }

    private void tally(String tail, ByteBuffer b) {
        String text = tail + new String(b.array(), 0, b.limit(), java.nio.charset.StandardCharsets.ISO_8859_1);
        counted.forEach((needle, n) -> {
            for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) {
                if (i + needle.length() > tail.length()) {
                    n.incrementAndGet();
                }
            }
        });
    }

    private void pump(SocketChannel from, SocketChannel to, boolean request) {
        Thread t = new Thread(() -> {
            ByteBuffer b = ByteBuffer.allocate(64 << 10);
            String tail = "";
            try {
                while (from.read(b) >= 0) {
                    b.flip();
                    if (request && !counted.isEmpty()) {
                        tally(tail, b);
                        String all = new String(b.array(), 0, b.limit(), java.nio.charset.StandardCharsets.ISO_8859_1);
                        tail = all.substring(Math.max(0, all.length() - 64));
                    }
                    while (b.hasRemaining()) {
                        to.write(b);
                    }
                    b.clear();
                }
                to.shutdownOutput();
            } catch (IOException e) {
                // Cut.
            }
        }, "docker-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Closes every open connection; new ones are still accepted. */
    void cutConnections() {
        for (SocketChannel c : open) {
            try {
                c.close();
            } catch (IOException ignored) {
                // Closing.
            }
            open.remove(c);
        }
    }

    /** Stops accepting and closes every connection. */
    synchronized void stop() throws IOException {
        if (listener != null) {
            listener.close();
            listener = null;
        }
        cutConnections();
    }

    @Override
    public void close() throws IOException {
        stop();
        Files.deleteIfExists(socket);
    }
}
