package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.CodeExecutionResult;
import dev.codeexec.FileRef;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.jupyter.KernelOptions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Python cells in a kernel inside the workspace's container ({@code ContainerEngine.Builder.pythonKernel}): state
 * across cells, the container's escape controls rerun through cells (each with its positive control), timeouts,
 * killed kernels, restarts, rich outputs, and a transport that opens no port inside the container.
 */
class ContainerKernelIT {

    /** A secret-looking variable of the engine's host environment, which no cell may see. */
    private static final String SECRET_NAME = "CODEEXEC_IT_API_KEY";
    private static final String SECRET_VALUE = "s3cret-" + System.nanoTime();

    private static ContainerEngine engine;
    private Workspace ws;

    @BeforeAll
    static void startEngine() {
        ContainerTesting.requireKernelImage();
        engine = ContainerTesting.kernelEngine()
                .hostEnvironment(Map.of("PATH", "/usr/bin:/bin", "TZ", "Etc/UTC", SECRET_NAME, SECRET_VALUE))
                .pythonKernel(KernelOptions.builder().interruptGrace(Duration.ofSeconds(10)).build())
                .build();
    }

    @AfterAll
    static void closeEngineAndCheckNothingIsLeft() {
        if (engine != null) {
            String id = engine.instanceId();
            engine.close();
            assertThat(ContainerTesting.containersOf(id)).as("labelled containers left after close").isEmpty();
        }
    }

    @BeforeEach
    void createWorkspace() {
        ws = engine.manager().createWorkspace("kernel", WorkspacePolicy.DEFAULT);
    }

    @AfterEach
    void removeWorkspace() {
        if (ws != null) {
            engine.manager().cleanup(ws);
        }
    }

    private static CodeExecutionResult cell(Workspace ws, String code) {
        return ContainerTesting.cell(engine, ws, code, Duration.ofSeconds(120));
    }

    private static CodeExecutionResult cell(Workspace ws, String code, Duration timeout) {
        return ContainerTesting.cell(engine, ws, code, timeout);
    }

    /** Runs {@code script} in the workspace's container as the runs' user (not a run: a helper exec). */
    private Execs.Result inContainer(String script) {
        return Execs.run(engine.docker(), engine.containerId(ws), ContainerEngine.DEFAULT_UID + ":"
                + ContainerEngine.DEFAULT_UID, List.of("sh", "-c", script));
    }

    @Test
    void should_keep_variables_and_imports_across_cells_and_say_so_in_its_capabilities() {
        assertThat(engine.describe().statefulCells()).isTrue();
        assertThat(cell(ws, "import math\nx = 41").exitCode()).isZero();

        CodeExecutionResult r = cell(ws, "print(math.floor(x + 1.5))");

        assertThat(r.exitCode()).isZero();
        assertThat(r.output()).isEqualTo("42\n");
    }

    @Test
    void should_run_python_blocks_as_fresh_processes_without_a_kernel() {
        // No disk quota: a second engine's volumes would sweep orphans, and its look at the first engine's lock
        // file closes that file, which releases the JVM's lock on it (POSIX locks are per process).
        try (ContainerEngine plain = ContainerTesting.engine().diskQuota(0).build()) {
            Workspace p = plain.manager().createWorkspace("plain", WorkspacePolicy.DEFAULT);
            assertThat(plain.describe().statefulCells()).isFalse();
            ContainerTesting.cell(plain, p, "x = 1", Duration.ofSeconds(60));

            CodeExecutionResult r = ContainerTesting.cell(plain, p, "print('x' in dir())", Duration.ofSeconds(60));

            assertThat(r.output()).isEqualTo("False\n");
            assertThatThrownBy(() -> plain.restartKernel(p)).isInstanceOf(UnsupportedCapabilityException.class);
        }
    }

    @Test
    void should_not_show_a_cell_a_host_file_outside_the_workspace(@TempDir Path tmp) throws IOException {
        Path secret = tmp.resolve("host-secret.txt");
        Files.writeString(secret, SECRET_VALUE);
        engine.fs().putFiles(ws, List.of(PutFile.of("work/mine.txt", "workspace file")));
        String read = "import os\n"
                + "for p in [%s, os.path.join(os.environ['WORK_DIR'], 'mine.txt')]:\n"
                + "    try:\n"
                + "        print(p.rsplit('/', 1)[1], open(p).read())\n"
                + "    except OSError as e:\n"
                + "        print(p.rsplit('/', 1)[1], type(e).__name__)\n";

        CodeExecutionResult r = cell(ws, read.formatted(pythonString(secret.toString())));

        assertThat(Files.readString(secret)).as("the host can read it").isEqualTo(SECRET_VALUE);
        assertThat(r.output()).as("the workspace's own file is readable (positive control)")
                .contains("mine.txt workspace file");
        assertThat(r.output()).contains("host-secret.txt FileNotFoundError").doesNotContain(SECRET_VALUE);
    }

    @Test
    void should_not_show_a_cell_another_workspaces_files() {
        Workspace other = engine.manager().createWorkspace("other", WorkspacePolicy.DEFAULT);
        try {
            engine.fs().putFiles(other, List.of(PutFile.of("work/theirs.txt", "other workspace's secret")));
            String read = "import os\n"
                    + "p = os.path.join(os.environ['WORK_DIR'], 'theirs.txt')\n"
                    + "try:\n"
                    + "    print(open(p).read())\n"
                    + "except OSError as e:\n"
                    + "    print(type(e).__name__)\n"
                    + "root = os.environ['WORKSPACE_DIR']\n"
                    + "hits = [f for d, _, fs in os.walk(root) for f in fs if f == 'theirs.txt']\n"
                    + "print('found', len(hits))\n";

            CodeExecutionResult theirs = cell(other, read);
            CodeExecutionResult mine = cell(ws, read);

            assertThat(theirs.output()).as("its own workspace's cell reads it (positive control)")
                    .contains("other workspace's secret").contains("found 1");
            assertThat(mine.output()).contains("FileNotFoundError").contains("found 0")
                    .doesNotContain("other workspace's secret");
        } finally {
            engine.manager().cleanup(other);
        }
    }

    @Test
    void should_reach_no_listener_of_the_host_and_no_address_from_a_cell() throws Exception {
        String gateway = bridgeGateway();
        List<ServerSocket> listeners = new ArrayList<>();
        try {
            listeners.add(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
            if (gateway != null) {
                listeners.add(new ServerSocket(0, 50, InetAddress.getByName(gateway)));
            }
            for (ServerSocket l : listeners) {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress(l.getInetAddress(), l.getLocalPort()), 5000);
                    assertThat(s.isConnected()).as("the host reaches its listener (positive control)").isTrue();
                }
            }
            StringBuilder targets = new StringBuilder();
            for (ServerSocket l : listeners) {
                targets.append("('").append(l.getInetAddress().getHostAddress()).append("', ")
                        .append(l.getLocalPort()).append("), ");
            }
            String probe = "import socket\n"
                    + "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1)\n"
                    + "socket.create_connection(srv.getsockname(), timeout=5); print('own loopback ok')\n"
                    + "for t in [" + targets + "('10.0.0.1', 80), ('1.1.1.1', 53)]:\n"
                    + "    try:\n"
                    + "        socket.create_connection(t, timeout=5); print('reached', t[0])\n"
                    + "    except OSError as e:\n"
                    + "        print('refused', t[0])\n"
                    + "print(sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]))\n";

            CodeExecutionResult r = cell(ws, probe);

            assertThat(r.output()).as("sockets work in the cell (positive control)").contains("own loopback ok");
            assertThat(r.output()).doesNotContain("reached").contains("refused 127.0.0.1").contains("refused 1.1.1.1")
                    .contains("['lo']");
            if (gateway != null) {
                assertThat(r.output()).contains("refused " + gateway);
            }
        } finally {
            for (ServerSocket l : listeners) {
                l.close();
            }
        }
    }

    @Test
    void should_keep_a_secret_looking_variable_of_the_host_out_of_cells() {
        RunResult run = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                .args("-c", "echo \"TZ=$TZ\"").build());
        CodeExecutionResult r = cell(ws, "import os\n"
                + "print(os.environ.get('" + SECRET_NAME + "'))\n"
                + "print('secret in env:', any('" + SECRET_VALUE + "' in v for v in os.environ.values()))\n"
                + "print('WORKSPACE_DIR=' + os.environ['WORKSPACE_DIR'])\n");

        assertThat(run.stdout()).as("a variable the policy keeps reaches a run (positive control)")
                .contains("TZ=Etc/UTC");
        assertThat(r.output()).as("the run's environment reaches the kernel (positive control)")
                .contains("WORKSPACE_DIR=" + ContainerWorkspaces.ROOT);
        assertThat(r.output()).startsWith("None\n").contains("secret in env: False");
    }

    @Test
    void should_interrupt_a_cell_past_its_timeout_and_keep_the_kernel_and_its_state() {
        cell(ws, "kept = 'before the loop'");

        CodeExecutionResult r = cell(ws, "print('looping', flush=True)\nwhile True:\n    pass", Duration.ofSeconds(3));

        assertThat(r.timedOut()).isTrue();
        assertThat(r.exitCode()).isEqualTo(-1);
        assertThat(r.output()).startsWith("looping\n").contains("KeyboardInterrupt");
        CodeExecutionResult after = cell(ws, "print(kept)");
        assertThat(after.exitCode()).isZero();
        assertThat(after.output()).isEqualTo("before the loop\n");
    }

    @Test
    void should_report_a_kernel_killed_from_outside_and_give_the_next_cell_a_fresh_one() {
        String pid = cell(ws, "import os\nstate = 1\nprint(os.getpid())").output().strip();
        assertThat(inContainer("tr '\\0' ' ' </proc/" + pid + "/cmdline").stdout())
                .as("the kernel runs inside the workspace's container").contains("kernelapp");

        Execs.Result kill = inContainer("kill -KILL " + pid);
        assertThat(kill.ok()).as("killed: " + kill).isTrue();
        // Either the next cell already runs in a fresh kernel and says the old one stopped, or it reached the
        // dying kernel and says it died; the cell after it runs in a fresh kernel either way.
        CodeExecutionResult first = cell(ws, "print('state' in dir())");
        CodeExecutionResult second = cell(ws, "print('state' in dir())");

        assertThat(first.output()).contains("kernel");
        if (first.exitCode() == 0) {
            assertThat(first.output()).contains("fresh kernel").endsWith("False\n");
        } else {
            assertThat(first.output()).contains("died");
        }
        assertThat(second.exitCode()).isZero();
        assertThat(second.output()).endsWith("False\n");
        assertThat(cell(ws, "import os\nprint(os.getpid())").output()).as("a new kernel runs")
                .isNotEqualTo(pid + "\n");
    }

    @Test
    void should_report_a_kernel_that_exits_during_a_cell_and_start_a_fresh_one() {
        cell(ws, "state = 'gone soon'");

        CodeExecutionResult r = cell(ws, "import os\nprint('bye', flush=True)\nos._exit(3)");

        assertThat(r.exitCode()).isEqualTo(-1);
        assertThat(r.timedOut()).isFalse();
        assertThat(r.output()).contains("died");
        CodeExecutionResult next = cell(ws, "print('state' in dir())");
        assertThat(next.exitCode()).isZero();
        assertThat(next.output()).endsWith("False\n");
    }

    @Test
    void should_restart_the_kernel_on_request_and_keep_the_files() {
        cell(ws, "state = 1\nopen('kept.txt', 'w').write('file')");

        engine.restartKernel(ws);

        CodeExecutionResult r = cell(ws, "print('state' in dir(), open('kept.txt').read())");
        assertThat(r.output()).endsWith("False file\n");
    }

    @Test
    void should_save_a_displayed_png_under_out() {
        String code = "import os, struct, zlib\n"
                + "def chunk(t, d):\n"
                + "    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)\n"
                + "png = (b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 1, 1, 8, 0, 0, 0, 0))\n"
                + "       + chunk(b'IDAT', zlib.compress(b'\\x00\\x80')) + chunk(b'IEND', b''))\n"
                + "open(os.path.join(os.environ['WORK_DIR'], 'expected.png'), 'wb').write(png)\n"
                + "from IPython.display import Image, display\n"
                + "display(Image(data=png))\n";

        CodeExecutionResult r = cell(ws, code);

        assertThat(r.exitCode()).isZero();
        List<FileRef> pngs = r.outputFiles().stream().filter(f -> f.name().startsWith("out/"))
                .filter(f -> f.name().endsWith(".png")).toList();
        assertThat(pngs).hasSize(1);
        byte[] expected = engine.fs().readFile(ws, "work/expected.png", 0, 1 << 20).content();
        byte[] saved = engine.fs().readFile(ws, pngs.get(0).name(), 0, 1 << 20).content();
        assertThat(saved).isEqualTo(expected);
    }

    @Test
    void should_carry_a_large_cell_and_a_large_output_byte_exact() throws Exception {
        // Every byte value, many times, both ways: the cell's source (JVM to kernel) and a display (kernel to JVM).
        byte[] data = new byte[300_000];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 131 + (i >> 8));
        }
        String hex = HexFormat.of().formatHex(data);
        String code = "import hashlib, os\n"
                + "data = bytes.fromhex('" + hex + "')\n"
                + "print(hashlib.sha256(data).hexdigest())\n"
                + "from IPython.display import Image, display\n"
                + "display(Image(data=b'\\x89PNG\\r\\n\\x1a\\n' + data))\n";
        String digest = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));

        CodeExecutionResult r = cell(ws, code);

        assertThat(r.exitCode()).isZero();
        assertThat(r.output()).startsWith(digest + "\n");
        FileRef png = r.outputFiles().stream().filter(f -> f.name().endsWith(".png")).findFirst().orElseThrow();
        byte[] saved = engine.fs().readFile(ws, png.name(), 0, 1 << 20).content();
        assertThat(saved).hasSize(data.length + 8);
        assertThat(Arrays.copyOfRange(saved, 8, saved.length)).isEqualTo(data);
    }

    @Test
    void should_listen_only_on_the_containers_own_loopback_and_keep_the_kernels_sockets_out_of_the_workspace() {
        cell(ws, "import socket\nheld = socket.socket()");
        // LISTEN entries not bound to 127.0.0.1 (the container's own loopback: network none, only its processes).
        // ipykernel itself binds one port there (its IOPub pipe for forked children), never another address.
        String exposed = "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == \"0A\" && $2 !~ /^0100007F:/"
                + " && $2 !~ /^0000000000000000FFFF00000100007F:/ && $2 !~ /^00000000000000000000000001000000:/'"
                + " | wc -l";
        String sockets = "find / -xdev -type s 2>/dev/null | wc -l; find " + ContainerWorkspaces.VOLUME
                + " -type s 2>/dev/null | wc -l";

        String before = inContainer(exposed).stdout().strip();
        List<String> found = inContainer(sockets).stdout().lines().toList();
        cell(ws, "held.bind(('0.0.0.0', 0)); held.listen(1)");
        String after = inContainer(exposed).stdout().strip();

        assertThat(before).as("no TCP listener on another address while the kernel runs").isEqualTo("0");
        assertThat(after).as("a cell's own listener on every address shows (positive control)").isEqualTo("1");
        assertThat(Integer.parseInt(found.get(0))).as("the kernel's Unix sockets exist (positive control)")
                .isPositive();
        assertThat(found.get(1)).as("none of them in the workspace's volume").isEqualTo("0");
    }

    /** Docker's default bridge's gateway (an address of this host), or null without one. */
    private static String bridgeGateway() {
        try {
            var ipam = engine.docker().control().inspectNetworkCmd().withNetworkId("bridge").exec().getIpam();
            return ipam == null || ipam.getConfig().isEmpty() ? null : ipam.getConfig().get(0).getGateway();
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static String pythonString(String s) {
        return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }
}
