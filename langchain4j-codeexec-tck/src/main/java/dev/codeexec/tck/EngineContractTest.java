package dev.codeexec.tck;

import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.ListOptions;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.WorkspacePolicy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.FileRef;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The contract every backend obeys. A backend's test class extends this and implements {@link #createEngine()};
 * the workspace-files half and the fixture are in {@link EngineFilesContract};
 * capability-dependent tests switch on {@link dev.codeexec.engine.Engine#describe()}: a capability that is claimed
 * is tested, one that is not claimed must be refused.
 */
public abstract class EngineContractTest extends EngineFilesContract {

    /**
     * How long a call that must not hang may take: the programs it would otherwise wait for sleep for hours, so this is
     * a liveness bound, not a benchmark, and generous for a loaded machine.
     */
    private static final Duration LIVENESS_BOUND = Duration.ofSeconds(120);


    /** Variables a clean-environment run may have besides the ones the spec sets. */
    protected Set<String> cleanEnvAllowedNames() {
        return Set.of("PATH", "HOME", "TMPDIR", "TMP", "TEMP", "LANG", "LC_ALL", "PWD", "SHLVL", "_",
                "WORKSPACE_DIR", "WORK_DIR", "OUTPUT_DIR", "RUN_DIR", "SKILLS_DIR", "HOSTNAME", "TERM");
    }

    /**
     * Command lines of processes still alive whose command line contains {@code marker}. The default reads the
     * host's {@code /proc}; backends whose processes are not host processes override it.
     */
    protected List<String> processesWithMarker(String marker) {
        List<String> found = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).forEach(p -> {
                try {
                    String cmd = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8)
                            .replace('\0', ' ');
                    String stat = Files.readString(p.resolve("stat"));
                    boolean zombie = stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
                    if (cmd.contains(marker) && !zombie) {
                        found.add(cmd);
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

    // ---- results ----

    @Test
    void should_return_exit_code_as_result_when_program_fails() {
        RunResult r = run("exit 3");
        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.timedOut()).isFalse();
        assertThat(r.succeeded()).isFalse();
    }

    @Test
    void should_separate_stdout_and_stderr() {
        RunResult r = run("echo out; echo err >&2");
        assertThat(r.stdout()).isEqualTo("out\n");
        assertThat(r.stderr()).isEqualTo("err\n");
        assertThat(r.exitCode()).isZero();
        assertThat(r.truncated()).isFalse();
    }

    @Test
    void should_feed_stdin() {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("cat").stdin("hello\nworld").build());
        assertThat(r.stdout()).isEqualTo("hello\nworld");
    }

    @Test
    void should_pass_arguments_verbatim() {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("printf").args("%s|", "a b", "$HOME",
                "'q'", "").build());
        assertThat(r.stdout()).isEqualTo("a b|$HOME|'q'||");
    }

    // ---- environment ----

    @Test
    void should_set_spec_env_and_workspace_variables() {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                .args("-c", "echo $FOO; echo $WORK_DIR; echo $OUTPUT_DIR; echo $RUN_DIR").env("FOO", "bar").build());
        String[] lines = r.stdout().split("\n");
        assertThat(lines[0]).isEqualTo("bar");
        assertThat(lines[1]).endsWith("/work");
        assertThat(lines[2]).endsWith("/out");
        assertThat(lines[3]).contains("/runs/run_");
    }

    @Test
    void should_start_from_minimal_environment_when_clean_env() {
        if (!engine.describe().supportsCleanEnv()) {
            // Fail closed: a backend that cannot provide a clean environment refuses to pretend.
            assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("env").cleanEnv(true)
                    .build())).isInstanceOf(UnsupportedCapabilityException.class);
            return;
        }
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("env").cleanEnv(true)
                .env("ONLY_THIS", "1").build());
        Set<String> names = new HashSet<>();
        for (String line : r.stdout().split("\n")) {
            if (line.contains("=")) {
                names.add(line.substring(0, line.indexOf('=')));
            }
        }
        assertThat(names).contains("PATH", "HOME", "ONLY_THIS", "WORKSPACE_DIR");
        Set<String> unexpected = new HashSet<>(names);
        unexpected.removeAll(cleanEnvAllowedNames());
        unexpected.remove("ONLY_THIS");
        assertThat(unexpected).as("variables leaked into a clean environment").isEmpty();
        String home = r.stdout().lines().filter(l -> l.startsWith("HOME=")).findFirst().orElseThrow();
        String wsDir = r.stdout().lines().filter(l -> l.startsWith("WORKSPACE_DIR=")).findFirst().orElseThrow();
        assertThat(home.substring(5)).startsWith(wsDir.substring("WORKSPACE_DIR=".length()));
    }

    // ---- cwd ----

    @Test
    void should_run_in_workspace_relative_cwd() {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("pwd").cwd("work").build());
        assertThat(r.stdout().strip()).endsWith("/work");
    }

    @Test
    void should_refuse_cwd_that_escapes() {
        assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("pwd").cwd("../").build()))
                .isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("pwd").cwd("/etc").build()))
                .isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("pwd").cwd("nope").build()))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("nope");
    }

    // ---- timeouts and process trees ----

    @Test
    void should_kill_whole_tree_when_timeout_expires() {
        String marker = uniqueSleep();
        long t0 = System.nanoTime();
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c",
                "sleep " + marker + " & "
                        + "setsid sleep " + marker + " & "
                        + "nohup sleep " + marker + " >/dev/null 2>&1 & "
                        + "(sleep " + marker + " &) ; "
                        + "echo started; sleep " + marker)
                .timeout(Duration.ofSeconds(1)).build());
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(r.timedOut()).isTrue();
        assertThat(r.stdout()).contains("started");
        // A liveness bound, not a benchmark: without a tree kill this call would hang for the sleep (hours).
        assertThat(took).isLessThan(LIVENESS_BOUND);
        assertThat(processesWithMarker(marker)).as("processes left after the timeout").isEmpty();
    }

    @Test
    void should_return_and_leave_no_process_when_background_child_holds_stdout() {
        String marker = uniqueSleep();
        long t0 = System.nanoTime();
        RunResult r = run("(sleep " + marker + " &); sleep " + marker + " & echo done");
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(r.exitCode()).isZero();
        assertThat(r.timedOut()).isFalse();
        assertThat(r.stdout()).contains("done");
        assertThat(took).isLessThan(LIVENESS_BOUND);
        assertThat(processesWithMarker(marker)).as("processes left after the run").isEmpty();
    }

    // ---- output cap ----

    @Test
    void should_cap_output_and_mark_truncation() {
        int cap = 64 * 1024;
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                .args("-c", "head -c 50000000 /dev/zero | tr '\\0' a; echo tail >&2").maxOutputBytes(cap)
                .timeout(Duration.ofSeconds(60)).build());
        assertThat(r.exitCode()).isZero();
        assertThat(r.stdoutTruncated()).isTrue();
        assertThat(r.stderrTruncated()).isFalse();
        assertThat(r.stdout().length()).isLessThan(cap + 200);
        assertThat(r.stdout()).startsWith("aaaa").contains("[output truncated:");
        assertThat(r.stderr()).isEqualTo("tail\n");
    }

    // ---- isolation between workspaces ----

    @Test
    void should_keep_concurrent_runs_in_different_workspaces_apart() throws Exception {
        int n = 6;
        List<Workspace> spaces = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            spaces.add(engine.manager().createWorkspace("c" + i, WorkspacePolicy.DEFAULT));
        }
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<RunResult>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Workspace w = spaces.get(i);
                String id = "ws-" + i;
                futures.add(pool.submit(() -> engine.runner().runProgram(w, RunProgramSpec.builder("sh")
                        .args("-c", "echo " + id + " > out/id.txt; sleep 0.2; cat out/id.txt; ls ../ | wc -l")
                        .cwd(".").build())));
            }
            for (int i = 0; i < n; i++) {
                RunResult r = futures.get(i).get();
                assertThat(r.stdout()).startsWith("ws-" + i + "\n");
                assertThat(engine.fs().readFile(spaces.get(i), "out/id.txt", 0, 100).contentAsString())
                        .isEqualTo("ws-" + i + "\n");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    // ---- bad input ----

    @Test
    void should_reject_bad_specs_with_specific_errors() {
        assertThatThrownBy(() -> RunProgramSpec.builder(" ").build()).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("cmd");
        assertThatThrownBy(() -> RunProgramSpec.builder("true").timeout(Duration.ofSeconds(-1)).build())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("timeout");
        Throwable t = catchThrowable(() -> engine.runner().runProgram(ws,
                RunProgramSpec.builder("no-such-command-" + UUID.randomUUID()).build()));
        if (t == null) {
            // Backends that cannot check first report the shell's "not found" code.
            RunResult r = engine.runner().runProgram(ws,
                    RunProgramSpec.builder("no-such-command-" + UUID.randomUUID()).build());
            assertThat(r.exitCode()).isIn(126, 127);
        } else {
            assertThat(t).isInstanceOf(InvalidSpecException.class).hasMessageContaining("not found");
        }
    }

    @Test
    void should_report_workspace_gone_when_removed_behind_engines_back() {
        engine.manager().cleanup(ws);
        assertThatThrownBy(() -> run("true")).isInstanceOf(WorkspaceGoneException.class);
        assertThatThrownBy(() -> engine.fs().putFiles(ws, List.of(PutFile.of("work/x", "x"))))
                .isInstanceOf(WorkspaceGoneException.class);
        // Cleanup is idempotent.
        engine.manager().cleanup(ws);
    }

    @Test
    void should_refuse_limits_the_engine_cannot_enforce() {
        Set<ResourceLimit> missing = new HashSet<>(Set.of(ResourceLimit.values()));
        missing.removeAll(engine.describe().enforcedLimits());
        for (ResourceLimit l : missing) {
            ResourceLimits limits = switch (l) {
                case CPU_TIME -> ResourceLimits.builder().cpuTime(Duration.ofSeconds(5)).build();
                case MEMORY -> ResourceLimits.builder().memoryBytes(64L << 20).build();
                case FILE_SIZE -> ResourceLimits.builder().maxFileBytes(1 << 20).build();
                case OPEN_FILES -> ResourceLimits.builder().maxOpenFiles(64).build();
                case PROCESSES -> ResourceLimits.builder().maxProcesses(32).build();
            };
            assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("true").limits(limits)
                    .build())).as(l.name()).isInstanceOf(UnsupportedCapabilityException.class)
                    .hasMessageContaining(l.name());
        }
        assertThat(engine.runner().runProgram(ws, RunProgramSpec.builder("true").build()).exitCode()).isZero();
    }

    // ---- streaming, sessions, code ----

    @Test
    void should_stream_output_to_listener_when_streaming() {
        List<String> chunks = Collections.synchronizedList(new ArrayList<>());
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh")
                .args("-c", "echo one; sleep 0.2; echo two >&2")
                .outputListener((s, b) -> chunks.add(s + ":" + new String(b, StandardCharsets.UTF_8))).build());
        assertThat(r.exitCode()).isZero();
        assertThat(r.stdout()).isEqualTo("one\n");
        if (engine.describe().streaming()) {
            assertThat(String.join("", chunks)).contains("STDOUT:one").contains("STDERR:two");
        }
    }

    @Test
    void should_run_interactive_session_when_interactive() {
        assertThat(engine.interactive().isPresent()).isEqualTo(engine.describe().interactive());
        if (engine.interactive().isEmpty()) {
            return;
        }
        try (ProgramSession s = engine.interactive().orElseThrow().startProgram(ws,
                RunProgramSpec.builder("cat").timeout(Duration.ofSeconds(30)).build())) {
            s.write("ping", true);
            ProgramPoll p = s.await(Duration.ofMillis(300), 0, 1000);
            for (int i = 0; i < 20 && !p.output().contains("ping"); i++) {
                p = s.await(Duration.ofMillis(100), 0, 1000);
            }
            assertThat(p.output()).isEqualTo("ping\n");
            assertThat(p.running()).isTrue();
            s.closeStdin();
            ProgramPoll end = s.await(Duration.ofSeconds(5), p.nextOffset(), 1000);
            assertThat(end.running()).isFalse();
            assertThat(end.exitCode()).isZero();
        }
    }

    @Test
    void should_execute_python_and_bash_blocks() {
        CodeExecutionResult r = engine.executeCode(ws, new CodeExecutionInput(List.of(
                CodeBlock.of("python", "import os\nprint(6*7)\nopen(os.environ['OUTPUT_DIR'] + '/r.txt','w')"
                        + ".write('x')"),
                CodeBlock.of("bash", "echo from-bash")), null, Duration.ofSeconds(30)));
        assertThat(r.exitCode()).isZero();
        assertThat(r.output()).contains("42").contains("from-bash");
        assertThat(r.outputFiles()).extracting(FileRef::name).contains("out/r.txt");
        assertThat(r.toText()).contains("42").contains("out/r.txt");

        CodeExecutionResult failed = engine.executeCode(ws, CodeExecutionInput.of(CodeBlock.of("py", "1/0")));
        assertThat(failed.exitCode()).isNotZero();
        assertThat(failed.output()).contains("ZeroDivisionError");

        assertThatThrownBy(() -> engine.executeCode(ws, CodeExecutionInput.of(CodeBlock.of("cobol", "x"))))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("cobol");
    }

    @Test
    void should_keep_the_run_history_bounded_when_a_workspace_runs_many_programs() {
        int keep = dev.codeexec.workspace.RunHistory.DEFAULT_KEEP;
        String last = null;
        for (int i = 0; i < keep + 25; i++) {
            last = run("echo $RUN_DIR").stdout().strip();
        }
        String newest = last.substring(last.lastIndexOf('/') + 1);

        List<String> folders = engine.fs().list(ws, "runs", ListOptions.maxEntries(10_000).withMaxDepth(1))
                .entries().stream().filter(FileInfo::directory).map(f -> f.path().substring("runs/".length()))
                .filter(n -> n.startsWith("run_")).toList();
        assertThat(folders).as("run folders after %d runs", keep + 25).hasSizeBetween(keep, keep + keep / 10)
                .contains(newest);
    }

    private static String uniqueSleep() {
        // A unique duration marks this test's processes, so the check cannot see anyone else's.
        return "3" + (100000 + new java.util.Random().nextInt(800000)) + "." + System.nanoTime() % 1000;
    }

}
