package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.SavedOutput;
import dev.codeexec.spi.BoundedOutput;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Output far over the cap in a real sandbox: the result keeps the real end, and the whole stream is saved in the run's
 * folder, where the sandboxed program of a later run can read it as the model's file tools can.
 */
class SandboxLongOutputIT extends AbstractSandboxIT {

    /** {@code seq 1 500000} (3,388,895 bytes), then the line a test run's summary would be. */
    private static final String PROGRAM = "seq 1 500000; echo 'FINAL: 3 passed, 0 failed'";

    @Test
    void should_keep_the_final_line_and_save_the_whole_stream_when_a_sandboxed_program_prints_3_mib() {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("/bin/sh").args("-c", PROGRAM)
                .cwd("work").timeout(Duration.ofSeconds(120)).build());

        assertThat(r.exitCode()).isZero();
        assertThat(r.stdoutTruncated()).isTrue();
        assertThat(r.stdout()).startsWith("1\n2\n3\n").endsWith("500000\nFINAL: 3 passed, 0 failed\n");
        assertThat(r.stdout().length()).isLessThan(BoundedOutput.DEFAULT_CAP + 200);
        SavedOutput saved = r.stdoutFile();
        assertThat(saved).as("the whole stream is saved").isNotNull();
        assertThat(saved.complete()).isTrue();
        assertThat(saved.path()).matches("runs/run_[^/]+/stdout");

        // Positive control: the saved file is the whole stream, readable inside the sandbox by the sandbox user.
        RunResult check = engine.runner().runProgram(ws, RunProgramSpec.builder("/bin/sh").args("-c",
                "wc -c < \"$WORKSPACE_DIR/" + saved.path() + "\"; tail -n 1 \"$WORKSPACE_DIR/" + saved.path() + "\"")
                .cwd("work").timeout(Duration.ofSeconds(120)).build());
        assertThat(check.stdout()).isEqualTo(saved.totalBytes() + "\nFINAL: 3 passed, 0 failed\n");
        assertThat(saved.totalBytes()).isEqualTo(3_388_895 + "FINAL: 3 passed, 0 failed\n".length());
    }
}
