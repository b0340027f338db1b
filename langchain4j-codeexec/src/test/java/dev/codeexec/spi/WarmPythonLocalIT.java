package dev.codeexec.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.local.LocalEngine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The warm python path on the local engine: warm blocks give what fresh ones give, share nothing, are killed at their
 * timeout, and no spare outlives its workspace or engine.
 */
class WarmPythonLocalIT {

    /** Snippets whose warm results must equal their fresh ones. */
    static final List<String> SNIPPETS = List.of(
            "print('hello')",
            "import sys\nprint('before')\nsys.exit(3)",
            "print('out')\nraise ValueError('boom')",
            "import sys\nprint(repr(sys.stdin.read()))\ntry:\n    input()\nexcept EOFError:\n    print('eof')",
            "print(__name__)",
            "import sys, os\nprint(sys.argv)\nprint(__file__ == os.path.abspath(sys.argv[0]), os.getcwd().endswith('/work'))",
            "import sys, os\nprint(sys.path[0] == os.path.dirname(os.path.realpath(sys.argv[0])))",
            "import sys\nsys.exit('a message')",
            "import sys\nsys.stderr.write('err\\n')\nprint('o')",
            "def f():\n    1/0\nf()");

    @TempDir
    Path tmp;

    private static CodeExecutionResult exec(LocalEngine engine, Workspace ws, String code, Duration timeout) {
        return engine.executeCode(ws, new CodeExecutionInput(List.of(CodeBlock.of("python", code)), null, timeout));
    }

    /** Runs a first block, which starts the workspace's spare, and waits until the spare has started. */
    private static void primed(LocalEngine engine, Workspace ws) {
        exec(engine, ws, "pass", Duration.ofSeconds(30));
        ((AbstractEngine) engine).warmPython().awaitStarted(ws.id());
    }

    private static String normalized(CodeExecutionResult r, Workspace ws) {
        return r.output().replace(ws.path(), "<ws>") + "|exit=" + r.exitCode() + "|timedOut=" + r.timedOut();
    }

    @Test
    void should_give_the_fresh_results_when_blocks_run_warm() {
        try (LocalEngine warm = LocalEngine.builder().rootDir(tmp.resolve("warm")).warmPython(true).build();
             LocalEngine fresh = LocalEngine.builder().rootDir(tmp.resolve("fresh")).build()) {
            Workspace ww = warm.manager().createWorkspace("w", WorkspacePolicy.DEFAULT);
            Workspace fw = fresh.manager().createWorkspace("f", WorkspacePolicy.DEFAULT);
            exec(warm, ww, "pass", Duration.ofSeconds(30)); // the first block of a workspace runs fresh
            for (String code : SNIPPETS) {
                long before = warm.warmPythonBlocks();
                CodeExecutionResult w = exec(warm, ww, code, Duration.ofSeconds(30));
                CodeExecutionResult f = exec(fresh, fw, code, Duration.ofSeconds(30));
                assertThat(warm.warmPythonBlocks()).as("ran warm: %s", code).isEqualTo(before + 1);
                assertThat(normalized(w, ww)).as(code).isEqualTo(normalized(f, fw));
            }
            assertThat(fresh.warmPythonBlocks()).isZero();
        }
    }

    @Test
    void should_share_no_state_when_two_blocks_run_warm() {
        try (LocalEngine engine = LocalEngine.builder().rootDir(tmp.resolve("b")).warmPython(true).build()) {
            Workspace ws = engine.manager().createWorkspace("s", WorkspacePolicy.DEFAULT);
            exec(engine, ws, "x = 5\nimport builtins\nbuiltins.leak = 1\nimport json", Duration.ofSeconds(30));
            CodeExecutionResult r = exec(engine, ws, "import sys, builtins\n"
                    + "print('x' in globals(), hasattr(builtins, 'leak'))", Duration.ofSeconds(30));
            assertThat(engine.warmPythonBlocks()).isEqualTo(1);
            assertThat(r.output()).isEqualTo("False False\n");
            // Positive control: within one block the state is there.
            CodeExecutionResult same = exec(engine, ws, "x = 5\nprint('x' in globals())", Duration.ofSeconds(30));
            assertThat(same.output()).isEqualTo("True\n");
        }
    }

    @Test
    void should_kill_the_warm_block_and_its_children_when_it_times_out() throws IOException {
        try (LocalEngine engine = LocalEngine.builder().rootDir(tmp.resolve("t")).warmPython(true).build()) {
            Workspace ws = engine.manager().createWorkspace("t", WorkspacePolicy.DEFAULT);
            exec(engine, ws, "pass", Duration.ofSeconds(30));
            CodeExecutionResult r = exec(engine, ws, "import subprocess, time\n"
                    + "subprocess.Popen(['sleep', '300'])\nprint('started', flush=True)\ntime.sleep(300)",
                    Duration.ofSeconds(2));
            assertThat(engine.warmPythonBlocks()).isEqualTo(1);
            assertThat(r.timedOut()).isTrue();
            assertThat(r.exitCode()).isEqualTo(-1);
            assertThat(r.output()).contains("started");
            assertThat(processesWithCwdUnder(ws, "sleep")).isEmpty();
        }
    }

    @Test
    void should_leave_no_spare_when_the_workspace_is_removed() throws Exception {
        try (LocalEngine engine = LocalEngine.builder().rootDir(tmp.resolve("r")).warmPython(true).build()) {
            Workspace ws = engine.manager().createWorkspace("r", WorkspacePolicy.DEFAULT);
            primed(engine, ws);
            awaitSpare(ws); // positive control: the spare is there and found
            engine.manager().cleanup(ws);
            awaitNoSpare(ws);
        }
    }

    @Test
    void should_leave_no_spare_when_the_engine_closes() throws Exception {
        Workspace ws;
        try (LocalEngine engine = LocalEngine.builder().rootDir(tmp.resolve("c")).warmPython(true).build()) {
            ws = engine.manager().createWorkspace("c", WorkspacePolicy.DEFAULT);
            primed(engine, ws);
            awaitSpare(ws);
        }
        assertThat(spares(ws)).isEmpty();
    }

    @Test
    void should_run_fresh_when_another_program_ran_in_the_workspace_since() throws Exception {
        try (LocalEngine engine = LocalEngine.builder().rootDir(tmp.resolve("o")).warmPython(true).build()) {
            Workspace ws = engine.manager().createWorkspace("o", WorkspacePolicy.DEFAULT);
            primed(engine, ws);
            engine.runner().runProgram(ws, RunProgramSpec.builder("true").build());
            assertThat(spares(ws)).isEmpty();
            exec(engine, ws, "pass", Duration.ofSeconds(30));
            assertThat(engine.warmPythonBlocks()).isZero();
            // Positive control: with nothing in between, the next block runs warm.
            exec(engine, ws, "pass", Duration.ofSeconds(30));
            assertThat(engine.warmPythonBlocks()).isEqualTo(1);
        }
    }

    @Test
    void should_change_nothing_when_the_option_is_off() throws Exception {
        try (LocalEngine engine = LocalEngine.builder().rootDir(tmp.resolve("n")).build()) {
            Workspace ws = engine.manager().createWorkspace("n", WorkspacePolicy.DEFAULT);
            exec(engine, ws, "pass", Duration.ofSeconds(30));
            CodeExecutionResult r = exec(engine, ws, "print(1)", Duration.ofSeconds(30));
            assertThat(r.output()).isEqualTo("1\n");
            assertThat(engine.warmPythonBlocks()).isZero();
            assertThat(spares(ws)).isEmpty();
        }
    }

    /** Waits for the workspace's spare's processes to show in {@code /proc} (its launcher may still be starting it). */
    static void awaitSpare(Workspace ws) throws Exception {
        for (int i = 0; i < 200 && spares(ws).isEmpty(); i++) {
            Thread.sleep(50);
        }
        assertThat(spares(ws)).isNotEmpty();
    }

    /** Waits for the workspace's spare to exit by itself (it polls its working directory). */
    static void awaitNoSpare(Workspace ws) throws Exception {
        for (int i = 0; i < 200 && !spares(ws).isEmpty(); i++) {
            Thread.sleep(50);
        }
        assertThat(spares(ws)).isEmpty();
    }

    /** Spare interpreters of the workspace: python processes running the stub from its {@code work/}. */
    static List<Long> spares(Workspace ws) throws IOException {
        return processesWithCwdUnder(ws, "del sys.path[0]");
    }

    /** Processes whose command line contains {@code marker} and whose working directory is in the workspace. */
    static List<Long> processesWithCwdUnder(Workspace ws, String marker) throws IOException {
        List<Long> found = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : (Iterable<Path>) procs::iterator) {
                String name = p.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                try {
                    String cmd = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8);
                    String cwd = Files.readSymbolicLink(p.resolve("cwd")).toString();
                    if (cmd.contains(marker) && cwd.startsWith(ws.path())) {
                        found.add(Long.parseLong(name));
                    }
                } catch (IOException | RuntimeException e) {
                    // The process ended meanwhile, or is not ours to read.
                }
            }
        }
        return found;
    }
}
