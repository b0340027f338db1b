package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.jupyter.KernelOptions;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A run of the workspace freezes its kernel for as long as it lasts: the kernel's heartbeat watch is held meanwhile,
 * so a run far longer than the heartbeat timeout (here 5 s, as in the Jupyter backend's tests: a live kernel on a
 * loaded machine answers well within it) leaves the kernel and its state alone. Without the hold, the frozen kernel
 * misses every echo of a 12 s run and is declared dead.
 */
class SandboxPythonKernelLongRunIT extends AbstractPythonKernelIT {

    @Override
    SandboxEngine.Builder builder() {
        return super.builder().pythonKernel(KernelOptions.builder().heartbeatInterval(Duration.ofSeconds(1))
                .heartbeatTimeout(Duration.ofSeconds(5)).build());
    }

    @Test
    void should_keep_the_kernel_and_its_state_when_a_run_outlasts_the_heartbeat_timeout() {
        cell("kept = 'before the run'");

        RunResult run = engine.runner().runProgram(ws, RunProgramSpec.builder("sleep").args("12").build());

        assertThat(run.exitCode()).as(run.stderr()).isZero();
        CodeExecutionResult after = cell("kept");
        assertThat(after.exitCode()).as(after.output()).isZero();
        assertThat(after.output()).isEqualTo("'before the run'\n");
    }
}
