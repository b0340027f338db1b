package dev.codeexec.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The limits E2bEngine claims ({@code prlimit} per run: CPU time, file size, open files) really stop a program that
 * exceeds them, each beside a positive control that stays within; memory and processes (the sandbox's) are refused.
 */
class E2bLimitsIT {

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.host("e2b-limits");
    private static E2bEngine engine;
    private static Workspace ws;

    @BeforeAll
    static void start() throws Exception {
        engine = FAKE.closing(FAKE.engine().build());
        ws = engine.manager().createWorkspace("limits", WorkspacePolicy.DEFAULT);
    }

    private static RunResult sh(String script, ResourceLimits limits) {
        return engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c", script).limits(limits)
                .timeout(Duration.ofSeconds(60)).build());
    }

    @Test
    void should_claim_cpu_time_file_size_and_open_files_only() {
        assertThat(engine.describe().enforcedLimits()).containsExactlyInAnyOrder(ResourceLimit.CPU_TIME,
                ResourceLimit.FILE_SIZE, ResourceLimit.OPEN_FILES);
    }

    @Test
    void should_stop_a_program_past_its_cpu_time() {
        RunResult within = sh("i=0; while [ $i -lt 1000 ]; do i=$((i+1)); done; echo ok",
                ResourceLimits.builder().cpuTime(Duration.ofSeconds(5)).build());
        RunResult spinning = sh("while :; do :; done", ResourceLimits.builder().cpuTime(Duration.ofSeconds(1)).build());

        assertThat(within.stdout()).isEqualTo("ok\n");
        assertThat(spinning.timedOut()).isFalse();
        assertThat(spinning.exitCode()).as("SIGXCPU (152) or SIGKILL (137)").isIn(152, 137);
    }

    @Test
    void should_stop_a_write_past_the_file_size_limit() {
        ResourceLimits limit = ResourceLimits.builder().maxFileBytes(4096).build();
        RunResult small = sh("head -c 1000 /dev/zero > out/small && wc -c < out/small", limit);
        RunResult big = sh("head -c 100000 /dev/zero > out/big; echo status $?; wc -c < out/big", limit);

        assertThat(small.stdout().strip()).isEqualTo("1000");
        assertThat(big.stdout()).doesNotContain("status 0");
        assertThat(big.stdout().strip()).endsWith("4096");
    }

    @Test
    void should_stop_opening_files_past_the_open_files_limit() {
        // paste holds all its files open at once.
        String open = "mkdir -p work/fds; i=1; while [ $i -le 40 ]; do echo $i > work/fds/f$i; i=$((i+1)); done; "
                + "paste work/fds/* > /dev/null && echo all";
        RunResult enough = sh(open, ResourceLimits.builder().maxOpenFiles(64).build());
        RunResult few = sh(open, ResourceLimits.builder().maxOpenFiles(16).build());

        assertThat(enough.stdout()).isEqualTo("all\n");
        assertThat(few.exitCode()).isNotZero();
        assertThat(few.stderr()).contains("Too many open files");
    }
}
