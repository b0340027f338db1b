package dev.codeexec.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Python cells in the fake code interpreter: state kept between cells, a cell past its timeout interrupted (the
 * engine closes the connection, the interpreter interrupts the kernel) with the kernel's state kept, a restart that
 * clears it, and bash blocks beside python ones.
 */
class E2bInterpreterIT {

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.python("e2b-cells");

    private static CodeExecutionResult cell(E2bEngine engine, Workspace ws, String code, Duration timeout) {
        return engine.executeCode(ws, new CodeExecutionInput(List.of(CodeBlock.of("python", code)), null, timeout));
    }

    @Test
    void should_interrupt_a_cell_past_its_timeout_and_keep_the_kernel_and_its_state() {
        try (E2bEngine engine = FAKE.engine().build()) {
            Workspace ws = engine.manager().createWorkspace("cells", WorkspacePolicy.DEFAULT);
            cell(engine, ws, "kept = 41", Duration.ofSeconds(30));

            CodeExecutionResult slow = cell(engine, ws, "import time\nprint('sleeping', flush=True)\ntime.sleep(300)",
                    Duration.ofSeconds(5));
            CodeExecutionResult after = cell(engine, ws, "kept + 1", Duration.ofSeconds(30));

            assertThat(slow.timedOut()).isTrue();
            assertThat(slow.exitCode()).isEqualTo(-1);
            assertThat(slow.output()).contains("sleeping").contains("[timed out after 5 s: the cell was interrupted]");
            assertThat(FAKE.fake().sandbox(engine.sandboxId(ws)).interpreter.interrupts.get()).isEqualTo(1);
            assertThat(after.exitCode()).isZero();
            assertThat(after.output()).isEqualTo("42\n");
        }
    }

    @Test
    void should_forget_the_state_when_the_interpreter_is_restarted_and_run_bash_blocks_as_scripts() {
        try (E2bEngine engine = FAKE.engine().build()) {
            Workspace ws = engine.manager().createWorkspace("restart", WorkspacePolicy.DEFAULT);
            cell(engine, ws, "gone = 1", Duration.ofSeconds(30));

            engine.restartInterpreter(ws);
            CodeExecutionResult r = engine.executeCode(ws, new CodeExecutionInput(List.of(
                    CodeBlock.of("bash", "echo from-bash > ../out/b.txt; echo bash-ran"),
                    CodeBlock.of("python", "print(open('../out/b.txt').read().strip())\ngone")), null,
                    Duration.ofSeconds(30)));

            assertThat(r.output()).contains("bash-ran").contains("from-bash").contains("NameError");
            assertThat(r.exitCode()).isEqualTo(1);
            assertThat(r.outputFiles()).extracting(f -> f.name()).contains("out/b.txt");
        }
    }
}
