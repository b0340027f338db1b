package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.codeexec.engine.RunOutcomeUnknownException;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run whose backend breaks after the program started ends in {@link RunOutcomeUnknownException}, with the output
 * received so far and why, never in a bare {@code exit_code: -1} or "backend unavailable": the Docker engine dies
 * (the socket proxy in front of it stops), the stream breaks (the proxy cuts its connections), the container stops.
 * Normal ends, a program killed by a signal included, keep their exit codes.
 */
class ContainerTransportFailureIT {

    @TempDir
    Path dir;

    @BeforeAll
    static void requireDocker() {
        ContainerTesting.requireDocker();
    }

    /** Runs a program that prints "1 2 3 4" and sleeps; {@code cut} runs once the line arrived. */
    private static Throwable runAndCut(ContainerEngine engine, Workspace ws, Runnable cut) throws Exception {
        CountDownLatch printed = new CountDownLatch(1);
        StringBuilder seen = new StringBuilder();
        RunProgramSpec spec = RunProgramSpec.builder("sh").args("-c", "echo 1 2 3 4 > work/effect.txt; "
                        + "echo 1 2 3 4; sleep 60").timeout(Duration.ofSeconds(120))
                .outputListener((stream, chunk) -> {
                    synchronized (seen) {
                        seen.append(new String(chunk, StandardCharsets.UTF_8));
                        if (seen.toString().contains("1 2 3 4\n")) {
                            printed.countDown();
                        }
                    }
                }).build();
        CompletableFuture<RunResult> run = CompletableFuture.supplyAsync(() -> engine.runner().runProgram(ws, spec));
        assertThat(printed.await(60, TimeUnit.SECONDS)).as("the program started and printed").isTrue();
        cut.run();
        try {
            RunResult r = run.get(90, TimeUnit.SECONDS);
            throw new AssertionError("the run returned a result: " + r);
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    /**
     * The run's outcome is unknown, with the output it had, whichever broken connection the engine noticed first:
     * {@code why} names the causes that may be reported (cutting every connection breaks the output stream and a
     * request for the exit status alike, and which one fails first is a race).
     */
    private static void assertOutcomeUnknown(Throwable t, String... why) {
        assertThat(t).isInstanceOf(RunOutcomeUnknownException.class).hasMessageContaining("outcome is unknown");
        assertThat(why).as("the cause named in: " + t.getMessage()).anyMatch(w -> t.getMessage().contains(w));
        RunResult partial = ((RunOutcomeUnknownException) t).partialResult();
        assertThat(partial.stdout()).isEqualTo("1 2 3 4\n");
        assertThat(partial.exitCode()).isEqualTo(-1);
    }

    @Test
    void should_report_outcome_unknown_with_the_output_when_the_docker_engine_dies_mid_run() throws Exception {
        try (DockerSocketProxy proxy = DockerSocketProxy.start(dir);
             ContainerEngine engine = ContainerTesting.engine().dockerHost(proxy.dockerHost()).build()) {
            Workspace ws = engine.manager().createWorkspace("dies", WorkspacePolicy.DEFAULT);

            Throwable t = runAndCut(engine, ws, () -> {
                try {
                    proxy.stop();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });

            assertOutcomeUnknown(t, "the Docker engine stopped answering during the run");
            // The engine comes back: the workspace and what the run did are there, no engine restart needed.
            proxy.listen();
            RunResult after = engine.runner().runProgram(ws, RunProgramSpec.builder("cat").args("work/effect.txt")
                    .build());
            assertThat(after.stdout()).isEqualTo("1 2 3 4\n");
        }
    }

    @Test
    void should_report_outcome_unknown_and_kill_the_program_when_the_stream_breaks_mid_run() throws Exception {
        try (DockerSocketProxy proxy = DockerSocketProxy.start(dir);
             ContainerEngine engine = ContainerTesting.engine().dockerHost(proxy.dockerHost()).build()) {
            Workspace ws = engine.manager().createWorkspace("breaks", WorkspacePolicy.DEFAULT);

            Throwable t = runAndCut(engine, ws, proxy::cutConnections);

            assertOutcomeUnknown(t, "the stream from the Docker engine", "the Docker engine stopped answering");
            RunResult left = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                    .args("-c", "for p in /proc/[0-9]*; do tr '\\0' ' ' <$p/cmdline; echo; done 2>/dev/null"
                            + " | grep -c '^sleep 60' || true").build());
            assertThat(left.stdout().strip()).as("the program's processes left running").isEqualTo("0");
        }
    }

    @Test
    void should_report_outcome_unknown_when_the_container_stops_mid_run() throws Exception {
        try (ContainerEngine engine = ContainerTesting.engine().build()) {
            Workspace ws = engine.manager().createWorkspace("stops", WorkspacePolicy.DEFAULT);

            Throwable t = runAndCut(engine, ws,
                    () -> engine.docker().control().killContainerCmd(engine.containerId(ws)).exec());

            assertOutcomeUnknown(t, "the workspace's container stopped during the run");
            RunResult after = engine.runner().runProgram(ws, RunProgramSpec.builder("cat").args("work/effect.txt")
                    .build());
            assertThat(after.stdout()).isEqualTo("1 2 3 4\n");
        }
    }

    @Test
    void should_return_the_exit_code_when_the_program_ends_or_is_killed_by_a_signal() throws Exception {
        try (DockerSocketProxy proxy = DockerSocketProxy.start(dir);
             ContainerEngine engine = ContainerTesting.engine().dockerHost(proxy.dockerHost()).build()) {
            Workspace ws = engine.manager().createWorkspace("normal", WorkspacePolicy.DEFAULT);

            RunResult exits = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                    .args("-c", "echo out; echo err >&2; exit 3").build());
            RunResult killed = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                    .args("-c", "echo before; kill -KILL $$").build());

            assertThat(exits.exitCode()).isEqualTo(3);
            assertThat(exits.stdout()).isEqualTo("out\n");
            assertThat(exits.stderr()).isEqualTo("err\n");
            assertThat(killed.exitCode()).isEqualTo(137);
            assertThat(killed.stdout()).isEqualTo("before\n");
        }
    }
}
