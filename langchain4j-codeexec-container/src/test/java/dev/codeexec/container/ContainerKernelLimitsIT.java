package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.jupyter.KernelOptions;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The container's limits hold inside kernel cells as inside runs: memory (the kernel is killed and replaced, the
 * workspace lives on) and processes (a fork loop is stopped at the limit). Each check first reads the limit in force.
 */
class ContainerKernelLimitsIT {

    private static final long MEMORY = 256L << 20;
    private static final int PROCESSES = 64;

    private static ContainerEngine engine;
    private Workspace ws;

    @BeforeAll
    static void startEngine() {
        ContainerTesting.requireKernelImage();
        engine = ContainerTesting.kernelEngine().memoryBytes(MEMORY).processes(PROCESSES)
                .pythonKernel(KernelOptions.defaults()).build();
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
        ws = engine.manager().createWorkspace("limits", WorkspacePolicy.DEFAULT);
    }

    @AfterEach
    void removeWorkspace() {
        if (ws != null) {
            engine.manager().cleanup(ws);
        }
    }

    private CodeExecutionResult cell(Workspace ws, String code) {
        return ContainerTesting.cell(engine, ws, code, Duration.ofSeconds(120));
    }

    /** A cell printing the container's limit from its cgroup v2 file, else its cgroup v1 file. */
    private static String limit(String v2, String v1) {
        return "import os\n"
                + "for f in ['/sys/fs/cgroup/" + v2 + "', '/sys/fs/cgroup/" + v1 + "']:\n"
                + "    if os.path.exists(f):\n"
                + "        print(open(f).read().strip())\n"
                + "        break\n";
    }

    private String sh(String script) {
        return engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c", script).build()).stdout();
    }

    @Test
    void should_stop_a_cell_allocating_past_the_memory_limit_and_keep_the_workspace_working() {
        assertThat(cell(ws, limit("memory.max", "memory/memory.limit_in_bytes")).output())
                .as("the limit in force").isEqualTo(MEMORY + "\n");
        cell(ws, "state = 1");
        CodeExecutionResult small = cell(ws, "b = bytearray(16 << 20); b[::4096] = b'x' * len(b[::4096])\n"
                + "print('allocated', len(b) >> 20)\ndel b");
        assertThat(small.output()).as("an allocation below the limit works (positive control)")
                .isEqualTo("allocated 16\n");

        // Bounded: the hog asks for 4x the limit, no more, and the cell has a timeout.
        CodeExecutionResult hog = cell(ws, "b = bytearray(" + (4 * MEMORY) + ")\n"
                + "b[::4096] = b'x' * len(b[::4096])\nprint('survived')");

        assertThat(hog.output()).doesNotContain("survived");
        assertThat(hog.exitCode()).isNotZero();
        assertThat(hog.timedOut()).isFalse();
        // Safe outcomes: Python's MemoryError (the kernel lives on), or the kernel killed and reported dead.
        assertThat(hog.output()).containsAnyOf("MemoryError", "died");
        CodeExecutionResult next = cell(ws, "print('usable')");
        assertThat(next.exitCode()).isZero();
        assertThat(next.output()).endsWith("usable\n");
        assertThat(sh("echo still-here")).as("the workspace's runs work too").isEqualTo("still-here\n");
    }

    @Test
    void should_stop_a_fork_loop_in_a_cell_at_the_pids_limit() {
        assertThat(cell(ws, limit("pids.max", "pids/pids.max")).output())
                .as("the limit in force").isEqualTo(PROCESSES + "\n");
        // Bounded: at most 1000 forks; each child sleeps until the cell kills it.
        String flood = "import os\n"
                + "kids = []\n"
                + "try:\n"
                + "    while len(kids) < 1000:\n"
                + "        pid = os.fork()\n"
                + "        if pid == 0:\n"
                + "            os.execv('/bin/sleep', ['sleep', '600'])\n"
                + "        kids.append(pid)\n"
                + "except OSError as e:\n"
                + "    print('fork failed', e.errno)\n"
                + "print('started', len(kids))\n"
                + "for k in kids:\n"
                + "    os.kill(k, 9)\n"
                + "    os.waitpid(k, 0)\n";

        CodeExecutionResult r = cell(ws, flood);

        assertThat(r.output()).contains("fork failed 11");
        int started = Integer.parseInt(r.output().replaceAll("(?s).*started (\\d+).*", "$1"));
        assertThat(started).as("forks work below the limit (positive control)").isPositive()
                .isLessThan(PROCESSES);
        assertThat(cell(ws, "print('usable')").output()).isEqualTo("usable\n");
        assertThat(sh("echo still-here")).isEqualTo("still-here\n");
    }
}
