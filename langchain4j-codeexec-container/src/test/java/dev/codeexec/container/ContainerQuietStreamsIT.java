package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Runs leave no trace outside their result: no uncaught exception on docker-java's threads (its stdin pump turns any
 * failed write into one) and no stack trace in the log (its callback template logs an ERROR for every closed stream),
 * whether the program reads its input, ignores it, or is killed.
 */
class ContainerQuietStreamsIT {

    @BeforeAll
    static void requireDocker() {
        ContainerTesting.requireDocker();
    }

    @Test
    void should_print_no_stack_trace_and_leave_no_uncaught_exception_when_runs_end_in_every_way() throws Exception {
        List<String> uncaught = new CopyOnWriteArrayList<>();
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        String unread = "x".repeat(8 << 20);
        try (ContainerEngine engine = ContainerTesting.engine().build()) {
            Workspace ws = engine.manager().createWorkspace("quiet", WorkspacePolicy.DEFAULT);
            Thread.setDefaultUncaughtExceptionHandler((t, e) -> uncaught.add(t.getName() + ": " + e));
            System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
            for (int i = 0; i < 8; i++) {
                assertThat(run(engine, ws, "echo hi", null, 60).stdout()).isEqualTo("hi\n");
                assertThat(run(engine, ws, "exit 3", unread, 60).exitCode()).as("ends without reading stdin")
                        .isEqualTo(3);
                assertThat(run(engine, ws, "head -c 5", unread, 60).stdout()).isEqualTo("xxxxx");
                assertThat(run(engine, ws, "wc -c", "abc", 60).stdout().strip()).isEqualTo("3");
            }
            for (int i = 0; i < 2; i++) {
                assertThat(run(engine, ws, "sleep 60", unread, 1).timedOut()).isTrue();
            }
            // docker-java's threads end after the runs; give them the moment they need to end, then look.
            Thread.sleep(1000);
        } finally {
            System.setErr(err);
            Thread.setDefaultUncaughtExceptionHandler(previous);
        }
        String log = captured.toString(StandardCharsets.UTF_8);
        assertThat(uncaught).as("uncaught exceptions").isEmpty();
        assertThat(log).as("stderr of the test JVM").doesNotContain("Exception").doesNotContain("\tat ");
    }

    private static RunResult run(ContainerEngine engine, Workspace ws, String script, String stdin, int seconds) {
        RunProgramSpec.Builder b = RunProgramSpec.builder("sh").args("-c", script).timeout(Duration.ofSeconds(seconds));
        if (stdin != null) {
            b.stdin(stdin);
        }
        return engine.runner().runProgram(ws, b.build());
    }
}
