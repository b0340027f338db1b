package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.jupyter.KernelOptions;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.WorkspaceTools;
import dev.codeexec.policy.CommandPolicy;
import dev.langchain4j.invocation.InvocationContext;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Python cells in a kernel inside the sandbox ({@code pythonKernel}), with real bubblewrap and a real ipykernel: state
 * kept across cells, the kernel started through a run's plan (the same user, mounts and environment), and the kernel
 * kept still while the host works on the workspace. The escape controls of the sandbox's own tests, rerun through
 * cells, are in {@link SandboxPythonKernelEscapeIT}; limits, timeouts and dead kernels in
 * {@link SandboxPythonKernelLifecycleIT}.
 */
class SandboxPythonKernelIT extends AbstractPythonKernelIT {

    @TempDir(factory = HostTempDirs.class)
    Path host;

    @Test
    void should_keep_state_across_cells_when_built_with_a_python_kernel() {
        assertThat(engine.describe().statefulCells()).isTrue();

        assertThat(cell("x = 6*7").exitCode()).isZero();
        CodeExecutionResult r = cell("x");

        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).isEqualTo("42\n");
    }

    @Test
    void should_run_the_kernel_as_a_run_of_the_workspace_when_it_starts() {
        CodeExecutionResult r = cell("import os, sys\n"
                + "print(sys.executable, os.getuid(), os.getcwd() == os.environ['WORK_DIR'], os.environ['HOME'])");

        assertThat(r.exitCode()).as(r.output()).isZero();
        // The sandbox's clean PATH finds the system python (the one with ipykernel); the user is a run's.
        String uid = SandboxTesting.isRoot() ? Integer.toString(SandboxUser.DEFAULT_UID) : "";
        assertThat(r.output()).startsWith("/usr/bin/python3 " + uid).contains(" True " + ws.path() + "/home");
    }

    @Test
    void should_run_blocks_as_programs_when_built_without_a_python_kernel() {
        try (SandboxEngine plain = SandboxEngine.builder().rootDir(tmp.resolve("plain")).build()) {
            Workspace w = plain.manager().createWorkspace("plain", WorkspacePolicy.DEFAULT);
            assertThat(plain.describe().statefulCells()).isFalse();
            assertThat(plain.executeCode(w, CodeExecutionInput.of(CodeBlock.of("python", "x = 1"))).exitCode())
                    .isZero();
            CodeExecutionResult r = plain.executeCode(w, CodeExecutionInput.of(CodeBlock.of("python",
                    "print('x' in dir())")));
            assertThat(r.output()).isEqualTo("False\n");
        }
    }

    @Test
    void should_refuse_a_kernel_on_an_engine_that_enforces_a_command_allow_list() {
        SandboxTesting.requireLandlock();
        dev.codeexec.testing.Requirements.require(SandboxTesting.isRoot(), "root (the allow list needs noexec volumes)");
        assertThatThrownBy(() -> SandboxEngine.builder().rootDir(tmp.resolve("guarded")).diskQuota(64L << 20)
                .enforceAllowList(CommandPolicy.builder().allow("ls", "cat").build())
                .pythonKernel(KernelOptions.defaults()).build())
                .isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageContaining("is not on the command allow list this engine enforces");
        // Allowed, an interpreter under the list could not read its standard library: no kernel could start.
        assertThatThrownBy(() -> SandboxEngine.builder().rootDir(tmp.resolve("guarded2")).diskQuota(64L << 20)
                .enforceAllowList(CommandPolicy.builder().allow("ls", "python3").build())
                .pythonKernel(KernelOptions.defaults()).build())
                .isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageContaining("cannot read its own standard library");
        // Positive control: the same allow list without a kernel builds and runs its programs.
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("allowed")).diskQuota(64L << 20)
                .enforceAllowList(CommandPolicy.builder().allow("ls", "cat").build()).build()) {
            Workspace w = e.manager().createWorkspace("allowed", WorkspacePolicy.DEFAULT);
            assertThat(e.runner().runProgram(w, RunProgramSpec.builder("ls").args("/").build()).stdout())
                    .contains("usr");
        }
    }

    /**
     * The gate's rule (see {@link SandboxWorkspaceGateIT}) with a kernel: code a cell left running (a thread that
     * swaps a workspace directory for a link to a host directory) is paused while the host works on the workspace.
     * A run reads the thread's counter twice: equal, since the kernel is paused for the whole run; the positive
     * control shows the thread counting between cells.
     */
    @Test
    void should_pause_what_a_cell_left_running_when_the_host_works_on_the_workspace() throws IOException {
        Path target = Files.createDirectories(host.resolve("host-target"));
        Files.writeString(target.resolve("config.json"), "HOST-SECRET");
        engine.fs().putFiles(ws, List.of(PutFile.of("work/sub/config.json", "WORKSPACE")));
        CodeExecutionResult started = cell("import os, threading, time\n"
                + "def swap():\n"
                + "    n = 0\n"
                + "    while True:\n"
                + "        n += 1\n"
                + "        with open('count.tmp', 'w') as f: f.write(str(n))\n"
                + "        os.replace('count.tmp', 'count')\n"
                + "        os.rename('sub', 'sub_real'); os.symlink('" + target + "', 'sub')\n"
                + "        time.sleep(0.001)\n"
                + "        os.remove('sub'); os.rename('sub_real', 'sub')\n"
                + "threading.Thread(target=swap, daemon=True).start()\n"
                + "print('started')");
        assertThat(started.output()).isEqualTo("started\n");

        // Positive control: between cells the thread runs (a cell waits until the counter moves).
        CodeExecutionResult moving = cell("import time\n"
                + "first = open('count').read()\n"
                + "while open('count').read() == first: time.sleep(0.01)\n"
                + "print('moving')");
        assertThat(moving.output()).isEqualTo("moving\n");

        for (int i = 0; i < 20; i++) {
            RunResult run = engine.runner().runProgram(ws, RunProgramSpec.builder("/bin/sh")
                    .args("-c", "cat count; echo; sleep 0.2; cat count").cwd("work")
                    .timeout(Duration.ofSeconds(60)).build());
            List<String> counts = run.stdout().lines().toList();
            assertThat(counts).as(run.stderr()).hasSize(2);
            assertThat(counts.get(1)).as("the kernel's thread ran during a run").isEqualTo(counts.get(0));
            try {
                engine.fs().putFiles(ws, List.of(PutFile.of("work/sub/planted.txt", "x")));
            } catch (RuntimeException e) {
                // The pause may have caught the thread with work/sub a link: the write is refused, which is safe.
                assertThat(e).hasMessageNotContaining(target.toString());
            }
        }
        try (Stream<Path> planted = Files.list(target)) {
            assertThat(planted.map(p -> p.getFileName().toString())).containsExactly("config.json");
        }
    }

    @Test
    void should_say_state_persists_through_the_tools_when_the_engine_has_a_kernel() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).autoExecuteCodeBlocks(false).build()) {
            WorkspaceTools tools = codeExec.tools();
            InvocationContext ctx = InvocationContext.builder().chatMemoryId("kernel-tools").build();

            assertThat(engine.describe().statefulCells()).isTrue();
            assertThat(tools.executeCode("python", "counter = 41", null, ctx)).startsWith("exit_code: 0");
            assertThat(tools.executeCode("python", "counter += 1\nprint(counter)", null, ctx))
                    .startsWith("exit_code: 0").contains("42");
        }
    }

    /** A file readable by root alone, for the escape tests. */
    static Path rootOnly(Path dir, String content) throws IOException {
        Path f = Files.writeString(dir.resolve("root-only-" + UUID.randomUUID()), content);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        return f;
    }
}
