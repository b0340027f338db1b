package dev.codeexec.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.BlockPrograms;
import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.spi.host.HostRuns;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.workspace.HostWorkspaceFS;
import dev.codeexec.workspace.HostWorkspaceManager;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The interpreter family base with a fake cell runner: python blocks go to the cells, in order, others run as
 * scripts; the first failure ends the loop; outputs are joined on lines of their own; languages are checked before
 * anything runs; without an interpreter the default loop runs.
 */
class InterpreterEngineTest {

    @TempDir
    Path root;

    private FakeInterpreter engine;
    private Workspace ws;

    @BeforeEach
    void setUp() {
        engine = new FakeInterpreter(root, true);
        ws = engine.manager().createWorkspace("t", WorkspacePolicy.DEFAULT);
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    @Test
    void should_run_python_blocks_as_cells_in_order_and_join_outputs_when_all_succeed() {
        CodeExecutionResult r = engine.executeCode(ws, input(
                CodeBlock.of("python", "one"), CodeBlock.of("bash", "printf two"), CodeBlock.of("py", "three")));

        assertThat(engine.cellsRun).containsExactly("one", "three");
        assertThat(r.output()).isEqualTo("cell:one\ntwo\ncell:three");
        assertThat(r.exitCode()).isZero();
        assertThat(r.timedOut()).isFalse();
        assertThat(r.truncated()).isFalse();
        assertThat(engine.cellRunnersOpened).isEqualTo(1);
    }

    @Test
    void should_stop_at_the_first_failing_cell_when_a_cell_raises() {
        CodeExecutionResult r = engine.executeCode(ws, input(
                CodeBlock.of("python", "one"), CodeBlock.of("python", "fail"), CodeBlock.of("python", "three")));

        assertThat(engine.cellsRun).containsExactly("one", "fail");
        assertThat(r.output()).isEqualTo("cell:one\ncell:fail");
        assertThat(r.exitCode()).isEqualTo(1);
    }

    @Test
    void should_stop_and_report_the_timeout_when_a_cell_times_out() {
        CodeExecutionResult r = engine.executeCode(ws, input(
                CodeBlock.of("python", "slow"), CodeBlock.of("bash", "echo never")));

        assertThat(engine.cellsRun).containsExactly("slow");
        assertThat(r.timedOut()).isTrue();
        assertThat(r.exitCode()).isEqualTo(-1);
        assertThat(r.truncated()).isTrue();
        assertThat(r.output()).doesNotContain("never");
    }

    @Test
    void should_stop_at_a_failing_script_block_when_a_script_exits_non_zero() {
        CodeExecutionResult r = engine.executeCode(ws, input(
                CodeBlock.of("python", "one"), CodeBlock.of("bash", "echo out; echo err >&2; exit 3"),
                CodeBlock.of("python", "three")));

        assertThat(engine.cellsRun).containsExactly("one");
        assertThat(r.output()).isEqualTo("cell:one\nout\nerr\n");
        assertThat(r.exitCode()).isEqualTo(3);
    }

    @Test
    void should_give_cells_the_input_timeout_and_the_output_cap_when_the_input_sets_one() {
        engine.executeCode(ws, new CodeExecutionInput(List.of(CodeBlock.of("python", "one")), null,
                Duration.ofSeconds(7)));
        engine.executeCode(ws, input(CodeBlock.of("python", "two")));

        assertThat(engine.timeouts).containsExactly(Duration.ofSeconds(7),
                Duration.ofSeconds(RunProgramSpec.DEFAULT_TIMEOUT_SECONDS));
        assertThat(engine.caps).containsOnly(BoundedOutput.DEFAULT_CAP);
    }

    @Test
    void should_run_nothing_when_a_block_has_an_unknown_language() {
        assertThatThrownBy(() -> engine.executeCode(ws, input(
                CodeBlock.of("python", "one"), CodeBlock.of("cobol", "x"))))
                .isInstanceOf(InvalidSpecException.class)
                .hasMessage("unsupported language 'cobol'; this engine runs python (python, py, python3) in a fake "
                        + "interpreter and bash (bash, sh, shell) as scripts");
        assertThat(engine.cellsRun).isEmpty();
        assertThat(engine.cellRunnersOpened).isZero();
    }

    @Test
    void should_collect_the_files_under_out_when_the_blocks_are_over() throws Exception {
        CodeExecutionResult r = engine.executeCode(ws, input(
                CodeBlock.of("bash", "echo data > ../out/result.txt"), CodeBlock.of("python", "one")));

        assertThat(r.outputFiles()).extracting(f -> f.name()).containsExactly("out/result.txt");
        assertThat(Files.readString(engine.hostManager.hostPath(ws).resolve("out/result.txt"),
                StandardCharsets.UTF_8)).isEqualTo("data\n");
    }

    @Test
    void should_run_every_block_as_a_script_with_the_default_join_when_there_is_no_interpreter() {
        try (FakeInterpreter plain = new FakeInterpreter(root.resolve("plain"), false)) {
            Workspace w = plain.manager().createWorkspace("p", WorkspacePolicy.DEFAULT);
            CodeExecutionResult r = plain.executeCode(w, input(
                    CodeBlock.of("bash", "printf a"), CodeBlock.of("bash", "printf b")));

            assertThat(plain.cellRunnersOpened).isZero();
            assertThat(r.output()).isEqualTo("ab");
            assertThatThrownBy(() -> plain.executeCode(w, CodeExecutionInput.of(CodeBlock.of("cobol", "x"))))
                    .hasMessage("unsupported language 'cobol'; this engine runs python (python, py, python3) and "
                            + "bash (bash, sh, shell) blocks");
        }
    }

    @Test
    void should_refuse_when_the_engine_is_closed() {
        engine.close();
        assertThatThrownBy(() -> engine.executeCode(ws, CodeExecutionInput.of(CodeBlock.of("python", "x"))))
                .isInstanceOf(CodeExecException.class)
                .hasMessageContaining("is closed");
    }

    private static CodeExecutionInput input(CodeBlock... blocks) {
        return new CodeExecutionInput(List.of(blocks), null, null);
    }

    /** Cells echo their code: {@code fail} raises, {@code slow} times out (and its text was cut). */
    private static final class FakeInterpreter extends InterpreterEngine {
        final HostWorkspaceManager hostManager;
        final HostWorkspaceFS fs;
        final boolean interpreter;
        final List<String> cellsRun = new ArrayList<>();
        final List<Duration> timeouts = new ArrayList<>();
        final List<Integer> caps = new ArrayList<>();
        int cellRunnersOpened;

        FakeInterpreter(Path base, boolean interpreter) {
            super("FakeInterpreter", new Settings(), ShellEnvironmentPolicy.sandboxDefault(), null);
            this.interpreter = interpreter;
            try {
                Files.createDirectories(base);
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
            this.hostManager = new HostWorkspaceManager(base);
            this.fs = HostWorkspaceFS.builder().hostPaths(hostManager::hostPath).build();
        }

        @Override
        protected CellRunner cells(Workspace ws) {
            cellRunnersOpened++;
            return (code, timeout, cap) -> {
                cellsRun.add(code);
                timeouts.add(timeout);
                caps.add(cap);
                return switch (code) {
                    case "fail" -> new BlockPrograms.Outcome("cell:fail", 1, false, false);
                    case "slow" -> new BlockPrograms.Outcome("cell:slow", -1, true, true);
                    default -> new BlockPrograms.Outcome("cell:" + code, 0, false, false);
                };
            };
        }

        @Override
        protected String interpreterName() {
            return "a fake interpreter";
        }

        @Override
        protected boolean hasInterpreter() {
            return interpreter;
        }

        @Override
        protected PreparedRun prepare(Workspace ws, RunProgramSpec spec) {
            return HostRuns.prepare(fs.resolver(ws), spec, environment(), outputCap(spec));
        }

        @Override
        protected void closeBackend() {
            hostManager.close();
        }

        @Override
        public String name() {
            return "fake";
        }

        @Override
        public WorkspaceManager manager() {
            return hostManager;
        }

        @Override
        public WorkspaceFS fs() {
            return fs;
        }

        @Override
        public Capabilities describe() {
            return Capabilities.builder().isolation(Isolation.NONE).networkAllowed(true).readOnlyMount(false)
                    .streaming(true).supportsCleanEnv(true).interactive(false).enforcedLimits(Set.of())
                    .diskQuota(false).build();
        }
    }

    private static final class Settings extends EngineBuilder<Settings> {
    }
}
