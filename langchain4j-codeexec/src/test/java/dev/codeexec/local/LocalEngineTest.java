package dev.codeexec.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.StdStream;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.spi.host.HostRunPlace;
import dev.codeexec.spi.BoundedOutput;
import dev.codeexec.spi.CommandLookup;
import dev.codeexec.testing.ExpectedLog;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalEngineTest {

    @TempDir
    Path tmp;

    LocalEngine engine;
    Workspace ws;

    @BeforeEach
    void setUp() {
        engine = LocalEngine.builder().rootDir(tmp.resolve("base")).build();
        ws = engine.manager().createWorkspace("local", WorkspacePolicy.DEFAULT);
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    private RunResult sh(String script) {
        return engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c", script).build());
    }

    // ---- run history ----

    @Test
    void should_keep_the_last_runs_folders_and_never_a_live_session_one_when_the_history_is_bounded()
            throws IOException {
        engine.close();
        engine = LocalEngine.builder().baseDir(tmp.resolve("bounded")).runHistory(3).build();
        ws = engine.manager().createWorkspace("history", WorkspacePolicy.DEFAULT);
        Path runs = Path.of(ws.path()).resolve("runs");
        Files.writeString(runs.resolve("notes.txt"), "not a run folder");
        try (ProgramSession s = engine.interactive().orElseThrow().startProgram(ws, RunProgramSpec.builder("sh")
                .args("-c", "echo mine > \"$RUN_DIR/own.txt\"; read line; cat \"$RUN_DIR/own.txt\"")
                .timeout(Duration.ofSeconds(60)).build())) {
            List<String> runDirs = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                runDirs.add(sh("echo $RUN_DIR").stdout().strip());
            }

            // The session's folder is the oldest, and stays while the session lives.
            s.write("go", true);
            ProgramPoll p = s.await(Duration.ofSeconds(30), 0, 1000);
            assertThat(p.output()).isEqualTo("mine\n");
            List<String> left;
            try (Stream<Path> l = Files.list(runs)) {
                left = l.map(x -> x.getFileName().toString()).sorted().toList();
            }
            assertThat(left).contains("notes.txt").filteredOn(n -> n.startsWith("run_")).hasSize(4);
            assertThat(left).contains(Path.of(runDirs.get(19)).getFileName().toString(),
                    Path.of(runDirs.get(18)).getFileName().toString(), Path.of(runDirs.get(17)).getFileName()
                            .toString()).doesNotContain(Path.of(runDirs.get(0)).getFileName().toString());
        }
        // Closed, the session's folder goes with the next trim.
        sh("true");
        try (Stream<Path> l = Files.list(runs)) {
            assertThat(l.filter(x -> x.getFileName().toString().startsWith("run_"))).hasSize(3);
        }
    }

    @Test
    void should_delete_each_run_folder_after_its_run_when_no_history_is_kept() throws IOException {
        engine.close();
        engine = LocalEngine.builder().baseDir(tmp.resolve("none")).runHistory(0).build();
        ws = engine.manager().createWorkspace("none", WorkspacePolicy.DEFAULT);

        RunResult r = sh("echo log > \"$RUN_DIR/log.txt\"; cat \"$RUN_DIR/log.txt\"");

        assertThat(r.stdout()).as("the run reads its own folder while it runs").isEqualTo("log\n");
        try (Stream<Path> l = Files.list(Path.of(ws.path()).resolve("runs"))) {
            assertThat(l).isEmpty();
        }
        assertThatThrownBy(() -> LocalEngine.builder().runHistory(-1).build())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("runHistory (-1)");
    }

    @Test
    void should_hold_little_memory_for_finished_background_sessions_until_they_are_closed() throws Exception {
        java.lang.management.MemoryMXBean memory = java.lang.management.ManagementFactory.getMemoryMXBean();
        long baseline = usedAfterGc(memory);
        List<ProgramSession> sessions = new ArrayList<>();
        try {
            for (int i = 0; i < 80; i++) {
                sessions.add(engine.interactive().orElseThrow().startProgram(ws, RunProgramSpec.builder("echo")
                        .args("session " + i).timeout(Duration.ofSeconds(60)).build()));
            }
            for (ProgramSession s : sessions) {
                assertThat(s.await(Duration.ofSeconds(30), 0, 100).output()).startsWith("session ");
            }
            // 80 sessions kept 80 MiB when each held its full 1 MiB log from the start.
            assertThat(usedAfterGc(memory) - baseline).as("heap held by 80 finished sessions")
                    .isLessThan(16L << 20);
        } finally {
            sessions.forEach(ProgramSession::close);
        }
    }

    private static long usedAfterGc(java.lang.management.MemoryMXBean memory) {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    // ---- stdin, listener, interrupt ----

    @Test
    void should_return_when_stdin_exceeds_pipe_buffer_and_program_does_not_read_it() {
        String big = "x".repeat(1 << 20);

        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("true").stdin(big)
                .timeout(Duration.ofSeconds(20)).build());
        RunResult echoed = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                .args("-c", "echo started; exit 4").stdin(big).timeout(Duration.ofSeconds(20)).build());

        assertThat(r.timedOut()).isFalse();
        assertThat(r.exitCode()).isZero();
        assertThat(echoed.timedOut()).isFalse();
        assertThat(echoed.exitCode()).isEqualTo(4);
        assertThat(echoed.stdout()).isEqualTo("started\n");
    }

    @Test
    void should_feed_large_stdin_when_program_reads_it() {
        String big = "y".repeat(3 << 20);

        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("wc").args("-c").stdin(big)
                .timeout(Duration.ofSeconds(20)).build());

        assertThat(r.stdout().strip()).isEqualTo(String.valueOf(3 << 20));
    }

    @Test
    void should_complete_run_when_output_listener_throws() {
        AtomicLong calls = new AtomicLong();
        RunResult r;
        try (ExpectedLog log = ExpectedLog.capture()) {
            r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                    .args("-c", "head -c 300000 /dev/zero | tr '\\0' a; echo; echo done >&2")
                    .timeout(HANG_GUARD)
                    .outputListener((stream, chunk) -> {
                        calls.incrementAndGet();
                        throw new IllegalStateException("listener bug");
                    }).build());
            assertThat(log.text()).containsOnlyOnce("output listener threw").contains("listener bug");
        }

        assertThat(r.timedOut()).isFalse();
        assertThat(r.exitCode()).isZero();
        assertThat(r.stdout()).hasSize(300_001);
        assertThat(r.stderr()).isEqualTo("done\n");
        assertThat(calls.get()).isEqualTo(1);
    }

    @Test
    void should_complete_run_when_output_listener_throws_an_error() {
        RunResult r;
        try (ExpectedLog log = ExpectedLog.capture()) {
            r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                    .args("-c", "head -c 300000 /dev/zero | tr '\\0' a")
                    .timeout(HANG_GUARD)
                    .outputListener((stream, chunk) -> {
                        throw new AssertionError("a test assertion inside a listener");
                    }).build());
            assertThat(log.text()).contains("java.lang.AssertionError: a test assertion inside a listener");
        }

        assertThat(r.timedOut()).isFalse();
        assertThat(r.stdout()).hasSize(300_000);
    }

    @Test
    void should_stream_chunks_to_listener_when_it_behaves() {
        StringBuffer out = new StringBuffer();
        StringBuffer err = new StringBuffer();

        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                .args("-c", "echo one; echo two >&2; echo three")
                .outputListener((stream, chunk) -> (stream == StdStream.STDOUT ? out : err)
                        .append(new String(chunk, StandardCharsets.UTF_8))).build());

        assertThat(out.toString()).isEqualTo(r.stdout()).isEqualTo("one\nthree\n");
        assertThat(err.toString()).isEqualTo("two\n");
    }

    @Test
    void should_kill_tree_and_restore_interrupt_flag_when_caller_is_interrupted() throws Exception {
        String marker = uniqueSleep();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean flagAfter = new AtomicBoolean();
        Thread caller = new Thread(() -> {
            try {
                sh("sleep " + marker + " & setsid sleep " + marker + " & sleep " + marker);
            } catch (Throwable t) {
                thrown.set(t);
            }
            flagAfter.set(Thread.currentThread().isInterrupted());
        }, "interrupted-caller");
        caller.start();
        waitFor(() -> !processesWithMarker(marker).isEmpty(), "the program to start");

        caller.interrupt();
        caller.join(10_000);

        assertThat(caller.isAlive()).isFalse();
        assertThat(thrown.get()).isInstanceOf(CodeExecException.class).hasMessageContaining("interrupted");
        assertThat(flagAfter).isTrue();
        waitFor(() -> processesWithMarker(marker).isEmpty(), "the process tree to die");
    }

    // ---- commands and environment ----

    @Test
    void should_resolve_command_on_run_path_when_spec_sets_path() throws IOException {
        Path bin = Files.createDirectories(tmp.resolve("fakebin"));
        Path fake = bin.resolve("ls");
        Files.writeString(fake, "#!/bin/sh\necho fake-ls\n");
        Files.setPosixFilePermissions(fake, PosixFilePermissions.fromString("rwxr-xr-x"));

        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("ls")
                .env("PATH", bin + ":/usr/bin:/bin").build());
        RunResult clean = engine.runner().runProgram(ws, RunProgramSpec.builder("ls").cleanEnv(true)
                .env("PATH", bin + ":" + LocalEngine.CLEAN_PATH).build());
        RunResult normal = engine.runner().runProgram(ws, RunProgramSpec.builder("ls").args("-d", ".").build());

        assertThat(r.stdout()).isEqualTo("fake-ls\n");
        assertThat(clean.stdout()).isEqualTo("fake-ls\n");
        assertThat(normal.stdout()).isEqualTo(".\n");
    }

    @Test
    void should_refuse_command_when_it_is_not_on_run_path() {
        assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                .env("PATH", "/nonexistent-dir").build()))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("'sh'")
                .hasMessageNotContaining("/nonexistent-dir");
    }

    @Test
    void should_resolve_relative_path_entries_against_cwd_and_skip_non_executables() throws IOException {
        Path cwd = Files.createDirectories(tmp.resolve("cwd"));
        Path rel = Files.createDirectories(cwd.resolve("tools"));
        Path noexec = Files.createDirectories(tmp.resolve("noexec"));
        Files.writeString(noexec.resolve("tool"), "#!/bin/sh\n");
        Files.writeString(rel.resolve("tool"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(rel.resolve("tool"), PosixFilePermissions.fromString("rwxr-xr-x"));

        assertThat(resolve("tool", ":" + noexec + "::tools", cwd))
                .isEqualTo(rel.resolve("tool").toString());
        assertThat(resolve("./x/y", null, cwd)).isEqualTo("./x/y");
        assertThatThrownBy(() -> resolve("tool", null, cwd))
                .isInstanceOf(InvalidSpecException.class);
    }

    /** The one lookup rule, as the local engine applies it. */
    private static String resolve(String cmd, String path, Path cwd) {
        return CommandLookup.resolve(cmd, path, cwd.toString(), HostRunPlace::isExecutableFile);
    }

    @Test
    void should_use_minimal_path_and_workspace_home_when_clean_env() {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                .args("-c", "echo \"$PATH|$HOME|$TMPDIR|$LANG|${SECRET_TOKEN:-unset}\"").cleanEnv(true).build());

        Path root = Path.of(ws.path());
        assertThat(r.stdout().strip()).isEqualTo(LocalEngine.CLEAN_PATH + "|" + root.resolve("home") + "|"
                + root.resolve("tmp") + "|C.UTF-8|unset");
    }

    @Test
    void should_inherit_base_environment_only_when_not_clean() {
        try (LocalEngine withBase = LocalEngine.builder().rootDir(tmp.resolve("base2"))
                .baseEnvironment(Map.of("PATH", "/usr/bin:/bin", "SECRET_TOKEN", "s3cr3t")).build()) {
            Workspace w = withBase.manager().createWorkspace("b", WorkspacePolicy.DEFAULT);
            RunProgramSpec spec = RunProgramSpec.builder("sh").args("-c", "echo ${SECRET_TOKEN:-unset}").build();

            assertThat(withBase.runner().runProgram(w, spec).stdout()).isEqualTo("s3cr3t\n");
            assertThat(withBase.runner().runProgram(w, spec.toBuilder().cleanEnv(true).build()).stdout())
                    .isEqualTo("unset\n");
            assertThat(withBase.runner().runProgram(w, spec.toBuilder().env("SECRET_TOKEN", "override").build())
                    .stdout()).isEqualTo("override\n");
        }
    }

    // ---- output cap ----

    @Test
    void should_cap_output_when_program_prints_200_megabytes() {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                .args("-c", "head -c 209715200 /dev/zero | tr '\\0' z").timeout(Duration.ofSeconds(120)).build());

        assertThat(r.timedOut()).isFalse();
        assertThat(r.exitCode()).isZero();
        assertThat(r.stdoutTruncated()).isTrue();
        assertThat(r.stdout()).startsWith("zzzz").endsWith("zzzz")
                .contains(BoundedOutput.middleMarker(209_715_200L - BoundedOutput.DEFAULT_CAP));
        assertThat(r.stdout().length()).isLessThan(BoundedOutput.DEFAULT_CAP + 100);
    }

    @Test
    void should_use_spec_cap_when_it_overrides_engine_cap() {
        try (LocalEngine small = LocalEngine.builder().rootDir(tmp.resolve("base3")).maxOutputBytes(10).build()) {
            Workspace w = small.manager().createWorkspace("c", WorkspacePolicy.DEFAULT);
            RunProgramSpec spec = RunProgramSpec.builder("sh").args("-c", "printf 0123456789abcdef").build();

            assertThat(small.runner().runProgram(w, spec).stdout()).startsWith("01234\n[output truncated")
                    .endsWith("\nbcdef");
            assertThat(small.runner().runProgram(w, spec.toBuilder().maxOutputBytes(4).build()).stdout())
                    .startsWith("01\n[output truncated: 12 bytes").endsWith("\nef");
        }
    }

    // ---- interactive sessions ----

    @Test
    void should_terminate_with_grace_when_session_is_killed() {
        try (ProgramSession s = startSession("trap 'echo got-term; exit 7' TERM; echo ready; "
                + "while :; do sleep 0.1; done", Duration.ofSeconds(60))) {
            waitForOutput(s, "ready");

            s.kill(Duration.ofSeconds(10));

            ProgramPoll p = s.poll(0, 1 << 16);
            assertThat(p.running()).isFalse();
            assertThat(p.output()).contains("ready", "got-term");
            assertThat(s.exitCode()).contains(7);
        }
    }

    @Test
    void should_kill_session_when_grace_expires() {
        String marker = uniqueSleep();
        try (ProgramSession s = startSession("trap '' TERM; echo ready; sleep " + marker,
                Duration.ofSeconds(60))) {
            waitForOutput(s, "ready");

            s.kill(Duration.ofMillis(200));

            assertThat(s.poll(0, 100).running()).isFalse();
            waitFor(() -> processesWithMarker(marker).isEmpty(), "the session's processes to die");
        }
    }

    @Test
    void should_refuse_write_when_session_has_exited() {
        try (ProgramSession s = startSession("read line; echo \"got $line\"", Duration.ofSeconds(30))) {
            s.write("hello", true);
            ProgramPoll p = awaitEnd(s, 1000);

            assertThat(p.running()).isFalse();
            assertThat(p.output()).isEqualTo("got hello\n");
            assertThat(p.exitCode()).isZero();
            assertThatThrownBy(() -> s.write("more", true)).isInstanceOf(InvalidSpecException.class)
                    .hasMessageContaining("exited");
        }
    }

    @Test
    void should_refuse_write_when_stdin_was_closed() {
        try (ProgramSession s = startSession("cat; echo eof", Duration.ofSeconds(30))) {
            s.write("abc", false);
            s.closeStdin();

            assertThat(awaitEnd(s).output()).isEqualTo("abceof\n");
            assertThatThrownBy(() -> s.write("x", false)).isInstanceOf(InvalidSpecException.class);
        }
    }

    @Test
    void should_kill_session_when_its_timeout_expires() {
        String marker = uniqueSleep();
        try (ProgramSession s = startSession("sleep " + marker + " & sleep " + marker, Duration.ofSeconds(1))) {
            ProgramPoll p = awaitEnd(s);

            assertThat(p.running()).isFalse();
            assertThat(p.timedOut()).isTrue();
            assertThat(s.exitCode()).contains(-1);
            waitFor(() -> processesWithMarker(marker).isEmpty(), "the timed-out session's processes to die");
        }
    }

    @Test
    void should_start_session_when_initial_stdin_exceeds_pipe_buffer_and_is_not_read() throws Exception {
        String big = "z".repeat(1 << 20);
        CompletableFuture<ProgramSession> started = CompletableFuture.supplyAsync(() -> engine.interactive()
                .orElseThrow().startProgram(ws, RunProgramSpec.builder("sh").args("-c", "echo up; sleep 60")
                        .stdin(big).timeout(Duration.ofSeconds(30)).build()));

        try (ProgramSession s = started.get(10, TimeUnit.SECONDS)) {
            waitForOutput(s, "up");
        }
    }

    @Test
    void should_close_session_when_a_write_is_blocked() throws Exception {
        ProgramSession s = startSession("echo up; sleep 60", Duration.ofSeconds(60));
        waitForOutput(s, "up");
        String big = "w".repeat(1 << 20);
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            try {
                s.write(big, false);
            } catch (InvalidSpecException expected) {
                // The session was closed under the writer.
            }
        });
        Thread.sleep(200);

        CompletableFuture.runAsync(s::close).get(10, TimeUnit.SECONDS);

        writer.get(10, TimeUnit.SECONDS);
        assertThat(s.exitCode()).isPresent();
    }

    @Test
    void should_kill_live_sessions_when_engine_closes() {
        String marker = uniqueSleep();
        ProgramSession s = startSession("sleep " + marker + " & sleep " + marker, Duration.ofSeconds(60));
        waitFor(() -> !processesWithMarker(marker).isEmpty(), "the session to start");

        engine.close();

        waitFor(() -> processesWithMarker(marker).isEmpty(), "the session's processes to die");
        assertThat(s.exitCode()).isPresent();
        assertThat(tmp.resolve("base")).isEmptyDirectory();
        assertThatThrownBy(() -> sh("true")).isInstanceOf(CodeExecException.class).hasMessageContaining("closed");
    }

    // ---- code execution ----

    @Test
    void should_reuse_workspace_when_execution_id_repeats() {
        CodeExecutionResult first = engine.executeCode(CodeExecutionInput.of(
                CodeBlock.of("bash", "echo kept > state.txt; echo written"), "conv-1"));
        CodeExecutionResult second = engine.executeCode(CodeExecutionInput.of(
                CodeBlock.of("bash", "cat state.txt"), "conv-1"));
        CodeExecutionResult other = engine.executeCode(CodeExecutionInput.of(
                CodeBlock.of("sh", "cat state.txt 2>/dev/null || echo none"), "conv-2"));

        assertThat(first.output()).isEqualTo("written\n");
        assertThat(second.output()).isEqualTo("kept\n");
        assertThat(other.output()).isEqualTo("none\n");
    }

    @Test
    void should_leave_nothing_behind_when_execution_id_is_null() throws IOException {
        List<Path> before = listDir(tmp.resolve("base"));

        CodeExecutionResult r = engine.executeCode(CodeExecutionInput.of(
                CodeBlock.of("bash", "echo hi > \"$OUTPUT_DIR/f.txt\"; echo ok")));

        assertThat(r.output()).isEqualTo("ok\n");
        assertThat(r.outputFiles()).extracting(f -> f.name()).containsExactly("out/f.txt");
        assertThat(listDir(tmp.resolve("base"))).isEqualTo(before);
    }

    @Test
    void should_refuse_unknown_language_before_running_anything() {
        assertThatThrownBy(() -> engine.executeCode(new CodeExecutionInput(List.of(
                CodeBlock.of("bash", "echo ran > \"$OUTPUT_DIR/ran.txt\""), CodeBlock.of("cobol", "x")), "c", null)))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("cobol");
        assertThat(engine.executeCode(CodeExecutionInput.of(CodeBlock.of("bash", "ls \"$OUTPUT_DIR\""), "c"))
                .output()).isEmpty();
    }

    // ---- helpers ----

    private ProgramSession startSession(String script, Duration timeout) {
        return engine.interactive().orElseThrow().startProgram(ws, RunProgramSpec.builder("sh").args("-c", script)
                .timeout(timeout).build());
    }

    private static void waitForOutput(ProgramSession s, String text) {
        waitFor(() -> s.poll(0, 1 << 16).output().contains(text), "output '" + text + "'");
    }

    /** A unique sleep duration (hours) that marks this test's processes. */
    private static String uniqueSleep() {
        return "3" + (100000 + new java.util.Random().nextInt(800000)) + "." + System.nanoTime() % 1000;
    }

    private static List<Path> listDir(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        }
    }

    interface Check {
        boolean ok() throws Exception;
    }

    /** Polls a condition for up to 15 seconds; no timing is asserted, only that it happens. */
    /**
     * Waits for the session to end, however loaded the machine is: the bound only keeps a broken engine from hanging
     * the build.
     */
    private static ProgramPoll awaitEnd(ProgramSession s) {
        return awaitEnd(s, 100);
    }

    private static ProgramPoll awaitEnd(ProgramSession s, int maxBytes) {
        long deadline = System.nanoTime() + HANG_GUARD.toNanos();
        ProgramPoll p = s.await(Duration.ofSeconds(10), 0, maxBytes);
        while (p.running() && System.nanoTime() < deadline) {
            p = s.await(Duration.ofSeconds(10), 0, maxBytes);
        }
        return p;
    }

    /**
     * How long {@link #waitFor} and {@link #awaitEnd} wait before they fail. Not a timing margin: on a healthy engine
     * they return as soon as the condition holds, and a loaded CI machine can take many seconds where a laptop takes
     * milliseconds.
     */
    private static final Duration HANG_GUARD = Duration.ofMinutes(2);

    static void waitFor(Check check, String what) {
        long deadline = System.nanoTime() + HANG_GUARD.toNanos();
        try {
            while (!check.ok()) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("timed out waiting for " + what);
                }
                Thread.sleep(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Live, non-zombie host processes whose command line contains {@code marker}. */
    static List<String> processesWithMarker(String marker) {
        List<String> found = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).forEach(p -> {
                try {
                    String cmd = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8);
                    String stat = Files.readString(p.resolve("stat"));
                    boolean zombie = stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
                    if (cmd.contains(marker) && !zombie) {
                        found.add(cmd.replace('\0', ' '));
                    }
                } catch (IOException | RuntimeException ignored) {
                    // The process ended while we looked.
                }
            });
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return found;
    }
}
