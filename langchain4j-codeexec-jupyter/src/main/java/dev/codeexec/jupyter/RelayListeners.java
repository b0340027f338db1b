package dev.codeexec.jupyter;

import dev.codeexec.engine.BackendUnavailableException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The loopback listeners of one relayed kernel, one per channel ({@code shell}, {@code iopub}, {@code stdin},
 * {@code control}, {@code hb}) on {@code 127.0.0.1:0}: jeromq speaks nothing but TCP to a kernel, so the unchanged
 * {@link KernelClient} connects here and {@link KernelRelay} carries each connection to the kernel. Every accepted
 * connection must pass the peer check ({@link LoopbackPeers#ownPeer}: it comes from this JVM), else it is closed at
 * once and never reaches the relay.
 *
 * <p>Thread roles: one acceptor thread ({@code codeexec-kernel-accept-<kernel>}) waits in a selector over the five
 * listeners, checks each connection and hands it (in blocking mode) to the consumer, which must not block for long.
 * {@link #close()} from any thread closes the listeners and ends the acceptor. No locks.
 */
final class RelayListeners implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RelayListeners.class);

    /** The channels, in the order of {@link ConnectionInfo}'s ports. */
    static final List<String> CHANNELS = List.of("shell", "iopub", "stdin", "control", "hb");

    private final String label;
    private final Map<String, ServerSocketChannel> listeners = new LinkedHashMap<>();
    private final Selector selector;
    private final Predicate<java.net.Socket> peerCheck;
    private final Thread acceptor;
    private volatile BiConsumer<String, SocketChannel> consumer;
    private volatile boolean closed;

    /** Listeners that accept only this JVM's connections. */
    RelayListeners(String label) {
        this(label, LoopbackPeers::ownPeer);
    }

    /**
     * @param peerCheck true for a connection that may pass (tests replace it to show what the check prevents)
     * @throws BackendUnavailableException when no loopback port can be bound
     */
    RelayListeners(String label, Predicate<java.net.Socket> peerCheck) {
        this.label = label;
        this.peerCheck = peerCheck;
        try {
            selector = Selector.open();
            InetAddress loopback = InetAddress.getByName(ConnectionInfo.IP);
            for (String ch : CHANNELS) {
                ServerSocketChannel s = ServerSocketChannel.open();
                listeners.put(ch, s);
                s.bind(new InetSocketAddress(loopback, 0), 8);
                s.configureBlocking(false);
                s.register(selector, SelectionKey.OP_ACCEPT, ch);
            }
        } catch (IOException e) {
            close();
            throw new BackendUnavailableException("cannot listen on loopback ports for a kernel: "
                    + e.getClass().getSimpleName(), e);
        }
        acceptor = new Thread(this::acceptLoop, "codeexec-kernel-accept-" + label);
        acceptor.setDaemon(true);
    }

    /** The port of {@code channel}'s listener. */
    int port(String channel) {
        return listeners.get(channel).socket().getLocalPort();
    }

    /** Starts accepting: each connection that passes the check goes to {@code onConnection(channel, socket)}. */
    void start(BiConsumer<String, SocketChannel> onConnection) {
        this.consumer = onConnection;
        acceptor.start();
    }

    private void acceptLoop() {
        try {
            while (!closed) {
                selector.select();
                for (SelectionKey key : new ArrayList<>(selector.selectedKeys())) {
                    selector.selectedKeys().remove(key);
                    String channel = (String) key.attachment();
                    SocketChannel c = ((ServerSocketChannel) key.channel()).accept();
                    if (c != null) {
                        admit(channel, c);
                    }
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            if (!closed) {
                LOG.warn("kernel {}: its listeners failed ({})", label, e.getClass().getSimpleName());
            }
        }
    }

    private void admit(String channel, SocketChannel c) {
        boolean own;
        try {
            own = peerCheck.test(c.socket());
        } catch (RuntimeException e) {
            own = false;
        }
        if (!own || closed) {
            if (closed) {
                LOG.debug("kernel {}: a connection to its {} channel after it was closed", label, channel);
            } else if (LoopbackPeers.peerExists(c.socket())) {
                LOG.warn("kernel {}: refused a connection to its {} channel from another process (port {})", label,
                        channel, c.socket().getPort());
            } else {
                // Our own client gave up the connection before it was checked (a reconnect as the kernel stops).
                LOG.debug("kernel {}: refused a connection to its {} channel whose peer was gone", label, channel);
            }
            closeQuietly(c);
            return;
        }
        try {
            c.configureBlocking(true);
            c.socket().setTcpNoDelay(true);
            consumer.accept(channel, c);
        } catch (IOException | RuntimeException e) {
            closeQuietly(c);
        }
    }

    /** Closes the listeners and ends the acceptor (connections already handed over are the consumer's). */
    @Override
    public void close() {
        closed = true;
        for (ServerSocketChannel s : listeners.values()) {
            closeQuietly(s);
        }
        if (selector != null) {
            try {
                selector.close();
            } catch (IOException ignored) {
                // nothing left to do
            }
        }
    }

    static void closeQuietly(java.nio.channels.Channel c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing is all that was wanted
        }
    }
}
