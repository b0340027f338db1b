package dev.codeexec.sandbox;

import static dev.codeexec.sandbox.SandboxTesting.python;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With the network restricted, no host service is reachable: TCP and UDP to the host, a filesystem UNIX socket in a
 * directory the sandbox can see, an abstract UNIX socket, and a datagram socket pair's {@code sendto}. Each positive
 * control runs the same client with the network enabled and reaches the same server, which proves the server was
 * there to be reached.
 */
class SandboxNetworkIT {

    @TempDir
    Path tmp;

    private ServerSocket tcp;
    private Thread tcpThread;
    private Process hostHelper;

    @BeforeAll
    static void requireSandbox() {
        SandboxTesting.requireSandbox();
    }

    @BeforeEach
    void startTcpServer() throws IOException {
        tcp = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        tcpThread = new Thread(() -> {
            while (!tcp.isClosed()) {
                try (Socket s = tcp.accept(); OutputStream o = s.getOutputStream()) {
                    o.write("pong\n".getBytes(StandardCharsets.UTF_8));
                } catch (IOException e) {
                    return;
                }
            }
        }, "test-tcp-server");
        tcpThread.setDaemon(true);
        tcpThread.start();
    }

    @AfterEach
    void stopServers() throws IOException {
        tcp.close();
        if (hostHelper != null) {
            hostHelper.destroyForcibly();
        }
    }

    private RunResult runWith(NetworkMode mode, String code, String readableDir) {
        PermissionProfile profile = PermissionProfile.workspaceWrite().withNetwork(mode);
        if (readableDir != null) {
            profile = profile.withReadPaths(readableDir);
        }
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root-" + mode.id() + UUID.randomUUID()))
                .profile(profile).build()) {
            Workspace ws = e.manager().createWorkspace("net", WorkspacePolicy.DEFAULT);
            return python(e, ws, SandboxTesting.TRY + code);
        }
    }

    @Test
    void should_not_reach_host_tcp_or_udp_when_restricted() {
        String code = "def tcp():\n"
                + "    s = socket.create_connection(('127.0.0.1', " + tcp.getLocalPort() + "), timeout=3)\n"
                + "    print('got', s.recv(10))\n"
                + "print('tcp', attempt(tcp))\n"
                + "def udp():\n"
                + "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                + "    s.sendto(b'x', ('10.0.2.2', 53))\n"
                + "print('udp-out', attempt(udp))\n"
                + "def own():\n"
                + "    srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen()\n"
                + "    cl = socket.create_connection(srv.getsockname(), timeout=3); a, _ = srv.accept()\n"
                + "    a.sendall(b'hi'); assert cl.recv(2) == b'hi'\n"
                + "print('own-loopback', attempt(own))\n";
        RunResult restricted = runWith(NetworkMode.RESTRICTED, code, null);
        assertThat(restricted.stdout()).doesNotContain("pong").contains("tcp ECONNREFUSED")
                .contains("udp-out ENETUNREACH");
        // Positive controls: a private loopback works inside; with the network enabled the host server answers.
        assertThat(restricted.stdout()).contains("own-loopback ok");
        RunResult enabled = runWith(NetworkMode.ENABLED, code, null);
        assertThat(enabled.stdout()).contains("got b'pong\\n'").contains("tcp ok");
    }

    @Test
    void should_not_reach_filesystem_unix_socket_in_visible_directory_when_restricted() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("sock"));
        Path sock = dir.resolve("s.sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            // Connecting needs write permission on the socket: programs do not run as root.
            Files.setPosixFilePermissions(sock, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
            Thread t = new Thread(() -> {
                while (server.isOpen()) {
                    try (SocketChannel c = server.accept()) {
                        c.write(ByteBuffer.wrap("pong\n".getBytes(StandardCharsets.UTF_8)));
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "test-unix-server");
            t.setDaemon(true);
            t.start();
            String code = "def unix():\n"
                    + "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(3)\n"
                    + "    s.connect('" + sock + "'); print('got', s.recv(10))\n"
                    + "print('unix', attempt(unix))\n"
                    + "print('visible', os.path.exists('" + sock + "'))\n";
            RunResult restricted = runWith(NetworkMode.RESTRICTED, code, dir.toString());
            assertThat(restricted.stdout()).doesNotContain("pong").contains("unix EPERM").contains("visible True");
            RunResult enabled = runWith(NetworkMode.ENABLED, code, dir.toString());
            assertThat(enabled.stdout()).contains("got b'pong\\n'");
        }
    }

    @Test
    void should_not_reach_abstract_unix_socket_when_restricted() throws Exception {
        String name = "codeexec-it-" + UUID.randomUUID();
        startHostHelper("import socket\n"
                + "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
                + "s.bind('\\0" + name + "'); s.listen(); print('ready', flush=True)\n"
                + "while True:\n"
                + "    c, _ = s.accept(); c.sendall(b'pong\\n'); c.close()\n");
        String code = "def abstract():\n"
                + "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(3)\n"
                + "    s.connect('\\0" + name + "'); print('got', s.recv(10))\n"
                + "print('abstract', attempt(abstract))\n";
        RunResult restricted = runWith(NetworkMode.RESTRICTED, code, null);
        assertThat(restricted.stdout()).doesNotContain("pong").contains("abstract EPERM");
        RunResult enabled = runWith(NetworkMode.ENABLED, code, null);
        assertThat(enabled.stdout()).contains("got b'pong\\n'");
    }

    @Test
    void should_refuse_datagram_socket_pair_that_could_sendto_a_host_socket() throws Exception {
        Path dir = Files.createDirectories(tmp.resolve("dgram"));
        Path sock = dir.resolve("d.sock");
        startHostHelper("import socket\n"
                + "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                + "s.bind('" + sock + "'); import os; os.chmod('" + sock + "', 0o777); print('ready', flush=True)\n"
                + "while True:\n"
                + "    data = s.recv(100); print('received', data.decode(), flush=True)\n");
        String code = "def pair():\n"
                + "    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                + "    a.sendto(b'hello-host', '" + sock + "')\n"
                + "print('dgram-pair', attempt(pair))\n"
                + "def stream_pair():\n"
                + "    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)\n"
                + "    a.sendall(b'x'); assert b.recv(1) == b'x'\n"
                + "print('stream-pair', attempt(stream_pair))\n"
                + "import asyncio\n"
                + "async def main():\n"
                + "    await asyncio.sleep(0)\n"
                + "    return 'asyncio-ok'\n"
                + "print(asyncio.run(main()))\n";
        RunResult restricted = runWith(NetworkMode.RESTRICTED, code, dir.toString());
        assertThat(restricted.stdout()).contains("dgram-pair EPERM");
        // Positive controls: stream pairs and asyncio still work; with the network enabled the datagram arrives.
        assertThat(restricted.stdout()).contains("stream-pair ok").contains("asyncio-ok");
        RunResult enabled = runWith(NetworkMode.ENABLED, code, dir.toString());
        assertThat(enabled.stdout()).contains("dgram-pair ok");
        assertThat(readLine(hostHelper)).isEqualTo("received hello-host");
    }

    private void startHostHelper(String code) throws IOException, InterruptedException {
        hostHelper = new ProcessBuilder(SandboxTesting.PYTHON, "-c", code).redirectErrorStream(true).start();
        assertThat(readLine(hostHelper)).isEqualTo("ready");
    }

    private static String readLine(Process p) throws IOException, InterruptedException {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String[] line = new String[1];
        Thread t = new Thread(() -> {
            try {
                line[0] = r.readLine();
            } catch (IOException ignored) {
                // Reported as null.
            }
        });
        t.start();
        t.join(TimeUnit.SECONDS.toMillis(10));
        return line[0];
    }
}
