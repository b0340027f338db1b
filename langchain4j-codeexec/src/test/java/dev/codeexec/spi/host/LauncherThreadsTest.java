package dev.codeexec.spi.host;

import static dev.codeexec.testing.HostProcesses.holdsFor;
import static dev.codeexec.testing.HostProcesses.killMarked;
import static dev.codeexec.testing.HostProcesses.uniqueSleep;
import static dev.codeexec.testing.HostProcesses.waitFor;
import static dev.codeexec.testing.HostProcesses.withMarker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Launcher threads shrink back after a burst, but a thread stays as long as a process it forked runs: the process's
 * parent-death signal is tied to that thread. The premise is checked too: a process forked with a parent-death
 * signal from a thread that ends dies with the thread.
 */
class LauncherThreadsTest {

    private static final Duration KEEP_ALIVE = Duration.ofMillis(100);
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static Process start(List<String> argv) {
        try {
            return new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** True when process {@code pid} now runs {@code program} (its argv[0]). */
    private static boolean isRunning(long pid, String program) throws IOException {
        byte[] cmd = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
        return new String(cmd, StandardCharsets.UTF_8).startsWith(program + "\0");
    }

    private static List<String> sleeper(String marker) {
        List<String> argv = new ArrayList<>(ParentDeath.wrapper());
        argv.addAll(List.of("sleep", marker));
        return argv;
    }

    /** Forks {@code n} processes at once, each fork held until all {@code n} are in flight: n threads at the peak. */
    private static int burst(LauncherThreads threads, int n) throws Exception {
        CountDownLatch inFlight = new CountDownLatch(n);
        List<CompletableFuture<Process>> forks = new ArrayList<>();
        int[] peak = new int[1];
        for (int i = 0; i < n; i++) {
            forks.add(CompletableFuture.supplyAsync(() -> threads.fork(() -> {
                inFlight.countDown();
                inFlight.await(WAIT.toSeconds(), TimeUnit.SECONDS);
                synchronized (peak) {
                    peak[0] = Math.max(peak[0], threads.threadCount());
                }
                return start(List.of("true"));
            })));
        }
        for (CompletableFuture<Process> f : forks) {
            assertThat(f.get(WAIT.toSeconds(), TimeUnit.SECONDS).waitFor()).isZero();
        }
        return peak[0];
    }

    @Test
    void should_shrink_back_when_a_burst_is_over() throws Exception {
        LauncherThreads threads = new LauncherThreads("test-launcher-", KEEP_ALIVE);

        int peak = burst(threads, 16);

        assertThat(peak).isEqualTo(16);
        waitFor(() -> threads.threadCount() == 0, "the idle launcher threads to end", WAIT);
        // And they come back on demand.
        assertThat(threads.fork(() -> start(List.of("true"))).waitFor()).isZero();
    }

    @Test
    void should_keep_the_thread_of_a_running_process_while_idle_threads_expire() throws Exception {
        Requirements.require(!ParentDeath.wrapper().isEmpty(), "util-linux setpriv with --pdeathsig");
        LauncherThreads threads = new LauncherThreads("test-launcher-", KEEP_ALIVE);
        String marker = uniqueSleep();
        try {
            Process session = threads.fork(() -> start(sleeper(marker)));
            waitFor(() -> !withMarker(marker).isEmpty(), "the long process to start", WAIT);

            burst(threads, 8);
            waitFor(() -> threads.threadCount() == 1, "all launcher threads but the long process's to end", WAIT);

            // Many keep-alives later its thread is still there, and so is the process, which would die with it.
            assertThat(holdsFor(() -> session.isAlive() && threads.threadCount() == 1,
                    KEEP_ALIVE.multipliedBy(10))).isTrue();
            session.destroyForcibly().waitFor();
            waitFor(() -> threads.threadCount() == 0, "the last launcher thread to end after its process", WAIT);
        } finally {
            killMarked(marker);
        }
    }

    @Test
    void should_kill_a_process_with_parent_death_signal_when_its_forking_thread_ends() throws Exception {
        Requirements.require(!ParentDeath.wrapper().isEmpty(), "util-linux setpriv with --pdeathsig");
        String marker = uniqueSleep();
        try {
            Process[] p = new Process[1];
            Thread caller = new Thread(() -> {
                p[0] = start(sleeper(marker));
                // setpriv sets the signal after the fork, then executes sleep: end only once it has.
                waitFor(() -> isRunning(p[0].pid(), "sleep"), "setpriv to execute sleep", WAIT);
            }, "short-lived-caller");
            caller.start();
            caller.join();

            // The premise of the launcher threads: the signal follows the forking thread, not the JVM.
            assertThat(p[0].waitFor(30, TimeUnit.SECONDS)).isTrue();
            waitFor(() -> withMarker(marker).isEmpty(), "the process to die with its thread", WAIT);
        } finally {
            killMarked(marker);
        }
    }

    @Test
    void should_refuse_new_forks_but_keep_live_processes_when_shut_down() throws Exception {
        Requirements.require(!ParentDeath.wrapper().isEmpty(), "util-linux setpriv with --pdeathsig");
        LauncherThreads threads = new LauncherThreads("test-launcher-", KEEP_ALIVE);
        String marker = uniqueSleep();
        try {
            Process running = threads.fork(() -> start(sleeper(marker)));

            threads.shutdown();

            assertThatThrownBy(() -> threads.fork(() -> start(List.of("true"))))
                    .isInstanceOf(CodeExecException.class).hasMessageContaining("closed");
            assertThat(holdsFor(running::isAlive, KEEP_ALIVE.multipliedBy(5))).isTrue();
            running.destroyForcibly().waitFor();
            waitFor(() -> threads.threadCount() == 0, "the launcher thread to end after its process", WAIT);
        } finally {
            killMarked(marker);
        }
    }

    @Test
    void should_pass_on_what_a_failed_fork_threw() {
        LauncherThreads threads = new LauncherThreads("test-launcher-", KEEP_ALIVE);

        assertThatThrownBy(() -> threads.fork(() -> {
            throw new IllegalStateException("no such program");
        })).isInstanceOf(IllegalStateException.class).hasMessage("no such program");
        waitFor(() -> threads.threadCount() == 0, "the launcher thread to end", WAIT);
    }
}
