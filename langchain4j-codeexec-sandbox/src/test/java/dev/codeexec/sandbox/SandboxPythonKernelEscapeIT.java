package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.jupyter.KernelOptions;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sandbox's escape controls rerun through cells of the workspace's python kernel: the kernel cannot read what a
 * run cannot read. Host secrets (a file readable by root alone, a file under a path the profile hides), another
 * workspace's files, a service on the host's loopback, and the JVM's secret-looking variables are out of reach; each
 * positive control shows the same cell, or the same code on the host, reaching what it should.
 */
class SandboxPythonKernelEscapeIT extends AbstractPythonKernelIT {

    @TempDir(factory = HostTempDirs.class)
    Path host;

    private final String secret = "s3cr3t-" + UUID.randomUUID();

    @Override
    SandboxEngine.Builder builder() {
        return super.builder().hostEnvironment(Map.of("PATH", "/usr/local/bin:/usr/bin:/bin", "LANG", "C.UTF-8",
                "OPENAI_API_KEY", secret, "AWS_SECRET_ACCESS_KEY", secret, "DB_PASSWORD", secret, "HOME", "/root"));
    }

    @Test
    void should_not_read_host_secrets_from_a_cell_and_read_a_granted_input() throws IOException {
        assumeTrue(SandboxTesting.isRoot(), "a file readable by root alone, and planting under /root, need root");
        Path rootOnly = SandboxPythonKernelIT.rootOnly(host, secret);
        Path hidden = Path.of("/root", ".codeexec-it-" + UUID.randomUUID());
        Files.writeString(hidden, secret);
        try {
            Path visible = Files.writeString(host.resolve("notes.txt"), "public-notes");
            engine.fs().putFiles(ws, List.of(PutFile.of("work/inputs/data.csv", "a,b\n1,2\n")));

            CodeExecutionResult r = cell(SandboxTesting.TRY
                    + "for p in ['" + rootOnly + "', '" + hidden + "', '/etc/shadow']:\n"
                    + "    print(p, attempt(lambda: open(p).read()))\n"
                    + "print('notes', open('" + visible + "').read())\n"
                    + "print('input', open('inputs/data.csv').read().splitlines()[1])\n");

            assertThat(r.exitCode()).as(r.output()).isZero();
            assertThat(r.output()).doesNotContain(secret)
                    .containsPattern(java.util.regex.Pattern.quote(rootOnly.toString()) + " EACCES")
                    .containsPattern(java.util.regex.Pattern.quote(hidden.toString()) + " E(NOENT|ACCES)")
                    .containsPattern("/etc/shadow E(NOENT|ACCES)");
            // Positive control: the same cell reads the host's public files and the workspace's granted input.
            assertThat(r.output()).contains("notes public-notes").contains("input 1,2");
        } finally {
            Files.deleteIfExists(hidden);
        }
    }

    @Test
    void should_not_see_another_workspace_from_a_cell() {
        Workspace other = engine.manager().createWorkspace("victim", WorkspacePolicy.DEFAULT);
        engine.fs().putFiles(other, List.of(PutFile.of("out/secret.txt", secret)));
        engine.fs().putFiles(ws, List.of(PutFile.of("out/mine.txt", "mine")));

        CodeExecutionResult r = cell(SandboxTesting.TRY
                + "print('other', attempt(lambda: open('" + other.path() + "/out/secret.txt').read()))\n"
                + "print('listing', sorted(os.listdir(os.path.dirname(os.environ['WORKSPACE_DIR']))))\n"
                + "print('mine', open(os.environ['WORKSPACE_DIR'] + '/out/mine.txt').read())\n");

        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).doesNotContain(secret).contains("other ENOENT")
                .contains("listing ['" + ws.id() + "']");
        // Positive control: the cell's own workspace is reachable by absolute path.
        assertThat(r.output()).contains("mine mine");
    }

    @Test
    void should_not_reach_a_host_loopback_service_from_a_cell_when_the_network_is_restricted() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread t = new Thread(() -> {
                while (!server.isClosed()) {
                    try (Socket s = server.accept(); OutputStream o = s.getOutputStream()) {
                        o.write("pong\n".getBytes(StandardCharsets.UTF_8));
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "test-loopback-server");
            t.setDaemon(true);
            t.start();
            String client = "import socket\n"
                    + "try:\n"
                    + "    s = socket.create_connection(('127.0.0.1', " + server.getLocalPort() + "), timeout=5)\n"
                    + "    print('reached', s.recv(10).decode().strip())\n"
                    + "except OSError as e:\n"
                    + "    print('refused', type(e).__name__)\n";

            CodeExecutionResult r = cell(client);

            assertThat(r.exitCode()).as(r.output()).isZero();
            assertThat(r.output()).startsWith("refused").doesNotContain("pong");
            // Positive control: the same code on the host reaches the server.
            Process p = new ProcessBuilder(SandboxTesting.PYTHON, "-c", client).redirectErrorStream(true).start();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo(
                    "reached pong\n");
        }
    }

    @Test
    void should_not_leak_the_jvms_secret_variables_into_a_cell() {
        CodeExecutionResult r = cell(SandboxTesting.TRY
                + "import glob\n"
                + "blob = ''\n"
                + "for f in glob.glob('/proc/[0-9]*/environ') + glob.glob('/proc/[0-9]*/cmdline'):\n"
                + "    try:\n"
                + "        blob += open(f, 'rb').read().decode('utf-8', 'replace')\n"
                + "    except OSError:\n"
                + "        pass\n"
                + "print('scanned', len(glob.glob('/proc/[0-9]*/environ')) > 1)\n"
                + "print('SCAN', blob)\n"
                + "print('ENV', dict(os.environ))\n");

        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).doesNotContain(secret).doesNotContain("OPENAI_API_KEY").doesNotContain("DB_PASSWORD");
        // Positive controls: the scan saw the kernel's processes; core variables arrive, HOME in the workspace.
        assertThat(r.output()).contains("scanned True").contains("'LANG': 'C.UTF-8'")
                .contains("'HOME': '" + ws.path() + "/home'");
    }

    @Test
    void should_keep_the_kernel_file_of_the_relay_out_of_the_workspace_when_a_cell_lists_it() {
        CodeExecutionResult r = cell("import os\n"
                + "found = [os.path.join(d, f) for d, _, fs in os.walk(os.environ['WORKSPACE_DIR']) for f in fs\n"
                + "         if f.endswith('.json') or 'ipc' in f or 'kernel' in f]\n"
                + "print(found)");

        assertThat(r.output()).isEqualTo("[]\n");
    }

    /** With the network enabled the kernel's cells reach the same host service (the control of the network test). */
    @Test
    void should_reach_the_host_loopback_from_a_cell_when_the_network_is_enabled() throws Exception {
        try (SandboxEngine open = SandboxEngine.builder().rootDir(tmp.resolve("open")).network(NetworkMode.ENABLED)
                .pythonKernel(KernelOptions.defaults()).build();
             ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread t = new Thread(() -> {
                try (Socket s = server.accept(); OutputStream o = s.getOutputStream()) {
                    o.write("pong\n".getBytes(StandardCharsets.UTF_8));
                } catch (IOException e) {
                    // closed
                }
            }, "test-loopback-server");
            t.setDaemon(true);
            t.start();
            Workspace w = open.manager().createWorkspace("open", WorkspacePolicy.DEFAULT);
            CodeExecutionResult r = cell(open, w, "import socket\n"
                    + "s = socket.create_connection(('127.0.0.1', " + server.getLocalPort() + "), timeout=30)\n"
                    + "print('reached', s.recv(10).decode().strip())\n", Duration.ofSeconds(60));
            assertThat(r.output()).as(r.output()).isEqualTo("reached pong\n");
        }
    }
}
