package dev.codeexec.jupyter;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The peer check of a relayed kernel's listeners: a connection from another process of the host is closed before it
 * reaches the relay; this JVM's own connections pass. The attack runs with the check disabled as well, to show that
 * the test sees the breach the check prevents.
 */
class RelayListenersTest {

    /** Connects to the port in argv[1], then says whether the connection was closed on it (or still open). */
    private static final String FOREIGN_CLIENT = """
            import socket, sys
            s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
            s.settimeout(60)
            try:
                print('closed' if s.recv(1) == b'' else 'data')
            except ConnectionResetError:
                print('closed')
            except socket.timeout:
                print('open')
            """;

    private final BlockingQueue<String> admitted = new LinkedBlockingQueue<>();
    private final List<SocketChannel> toClose = new ArrayList<>();

    @BeforeAll
    static void requireLinux() {
        Requirements.require(Files.isReadable(Path.of("/proc/net/tcp")) && Files.isExecutable(Path.of("/usr/bin/python3")),
                "Linux with /proc/net/tcp and /usr/bin/python3");
    }

    private RelayListeners listeners(boolean checked) {
        RelayListeners l = checked ? new RelayListeners("test") : new RelayListeners("test", s -> true);
        l.start((channel, c) -> {
            toClose.add(c);
            admitted.add(channel + " " + c.socket().getPort());
        });
        return l;
    }

    private static String foreignConnect(int port) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", FOREIGN_CLIENT, Integer.toString(port))
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        p.waitFor();
        return out;
    }

    @Test
    void should_close_a_connection_from_another_process_without_handing_it_on() throws Exception {
        try (RelayListeners l = listeners(true)) {
            assertThat(foreignConnect(l.port("iopub"))).isEqualTo("closed");
            assertThat(admitted).as("nothing reached the relay").isEmpty();

            // Positive control: this JVM's own connection passes, on the same listener.
            try (SocketChannel own = SocketChannel.open(new InetSocketAddress("127.0.0.1", l.port("iopub")))) {
                assertThat(admitted.poll(60, TimeUnit.SECONDS)).isEqualTo("iopub " + own.socket().getLocalPort());
            }
        } finally {
            closeAll();
        }
    }

    @Test
    void should_hand_on_the_foreign_connection_when_the_check_is_disabled() throws Exception {
        // What the check prevents: without it, another process's connection reaches the relay.
        try (RelayListeners l = listeners(false)) {
            Thread t = new Thread(() -> {
                try {
                    foreignConnect(l.port("shell"));
                } catch (IOException | InterruptedException ignored) {
                    // the assertion below tells
                }
            });
            t.setDaemon(true);
            t.start();
            assertThat(admitted.poll(60, TimeUnit.SECONDS)).startsWith("shell ");
        } finally {
            closeAll();
        }
    }

    @Test
    void should_admit_every_connection_this_jvm_opens() throws Exception {
        try (RelayListeners l = listeners(true)) {
            for (int i = 0; i < 200; i++) {
                String ch = RelayListeners.CHANNELS.get(i % 5);
                try (SocketChannel own = SocketChannel.open(new InetSocketAddress("127.0.0.1", l.port(ch)))) {
                    assertThat(admitted.poll(60, TimeUnit.SECONDS)).as("connection %d", i)
                            .isEqualTo(ch + " " + own.socket().getLocalPort());
                }
            }
        } finally {
            closeAll();
        }
    }

    private void closeAll() throws IOException {
        for (SocketChannel c : toClose) {
            c.close();
        }
    }
}
