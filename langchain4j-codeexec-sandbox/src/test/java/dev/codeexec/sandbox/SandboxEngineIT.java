package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Engine behaviour beyond the shared contract: modes, capabilities, bad input, sessions, cleanup. */
class SandboxEngineIT {

    @TempDir
    Path tmp;

    @BeforeAll
    static void requireSandbox() {
        SandboxTesting.requireSandbox();
    }

    @Test
    void should_declare_what_it_enforces() {
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("r")).build()) {
            Capabilities c = e.describe();
            assertThat(c.isolation()).isEqualTo(Isolation.OS_SANDBOX);
            assertThat(c.networkAllowed()).isFalse();
            assertThat(c.supportsCleanEnv()).isTrue();
            assertThat(c.readOnlyMount()).isTrue();
            assertThat(c.streaming()).isTrue();
            assertThat(c.interactive()).isTrue();
            // By default where the host can enforce it: Linux with the engine as root (loop devices).
            assertThat(c.diskQuota()).isEqualTo(SandboxTesting.isRoot());
        }
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("r2")).network(NetworkMode.ENABLED)
                .build()) {
            assertThat(e.describe().networkAllowed()).isTrue();
            assertThat(e.profile().network()).isEqualTo(NetworkMode.ENABLED);
        }
    }

    @Test
    void should_run_without_sandbox_only_when_danger_full_access_says_so() throws Exception {
        Path hostFile = Files.writeString(tmp.resolve("host.txt"), "host");
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("r"))
                .profile(PermissionProfile.dangerFullAccess()).build()) {
            assertThat(e.describe().isolation()).isEqualTo(Isolation.NONE);
            assertThat(e.describe().networkAllowed()).isTrue();
            Workspace ws = e.manager().createWorkspace("d", WorkspacePolicy.DEFAULT);
            RunResult r = SandboxTesting.sh(e, ws, "cat " + hostFile + "; echo changed > " + hostFile);
            assertThat(r.stdout()).isEqualTo("host");
            assertThat(Files.readString(hostFile)).isEqualTo("changed\n");
        }
    }

    @Test
    void should_declare_external_isolation_and_run_directly() {
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("r"))
                .profile(PermissionProfile.external(NetworkMode.RESTRICTED)).build()) {
            assertThat(e.describe().isolation()).isEqualTo(Isolation.EXTERNAL);
            assertThat(e.describe().networkAllowed()).isFalse();
            Workspace ws = e.manager().createWorkspace("x", WorkspacePolicy.DEFAULT);
            assertThat(SandboxTesting.python(e, ws, "print('hi')").stdout()).isEqualTo("hi\n");
        }
    }

    @Test
    void should_refuse_bad_input_before_anything_runs() {
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("r")).build()) {
            Workspace ws = e.manager().createWorkspace("b", WorkspacePolicy.DEFAULT);
            assertThatThrownBy(() -> e.runner().runProgram(ws, RunProgramSpec.builder("no-such-tool-xyz").build()))
                    .isInstanceOf(InvalidSpecException.class).hasMessageContaining("not found");
            assertThatThrownBy(() -> e.runProgram(ws, RunProgramSpec.builder("true").build(),
                    AdditionalPermissions.read(tmp.resolve("missing").toString())))
                    .isInstanceOf(InvalidSpecException.class).hasMessageContaining("does not exist");
            assertThatThrownBy(() -> e.runProgram(ws, RunProgramSpec.builder("true").build(),
                    AdditionalPermissions.write("/tmp/*")))
                    .isInstanceOf(InvalidSpecException.class).hasMessageContaining("glob");
            // A relative command that is missing inside the sandbox is a result, like a shell's 127.
            RunResult missing = e.runner().runProgram(ws, RunProgramSpec.builder("./nope.sh").cwd("work").build());
            assertThat(missing.exitCode()).isEqualTo(127);
        }
        assertThatThrownBy(() -> SandboxEngine.builder().rootDir(tmp.resolve("r3")).maxOutputBytes(0).build())
                .isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_run_interactive_session_with_limits_and_release_it() throws Exception {
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("r"))
                .limits(ResourceLimits.builder().maxOpenFiles(64).build()).build()) {
            Workspace ws = e.manager().createWorkspace("i", WorkspacePolicy.DEFAULT);
            try (ProgramSession s = e.interactive().orElseThrow().startProgram(ws, RunProgramSpec
                    .builder(SandboxTesting.PYTHON).args("-u", "-c", "import sys\nfor l in sys.stdin: print(l.upper(),"
                            + " end='')").timeout(Duration.ofSeconds(30)).build())) {
                s.write("hello", true);
                ProgramPoll p = awaitOutput(s, "HELLO");
                assertThat(p.output()).isEqualTo("HELLO\n");
                s.closeStdin();
                assertThat(s.await(Duration.ofMinutes(1), p.nextOffset(), 100).running()).isFalse();
            }
        }
    }

    @Test
    void should_keep_session_alive_after_the_thread_that_started_it_ends() throws Exception {
        // bubblewrap's --die-with-parent follows the parent *thread*: a session started from a short-lived thread
        // must not die with it.
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("r")).build()) {
            Workspace ws = e.manager().createWorkspace("t", WorkspacePolicy.DEFAULT);
            ProgramSession[] holder = new ProgramSession[1];
            Thread starter = new Thread(() -> holder[0] = e.interactive().orElseThrow().startProgram(ws,
                    RunProgramSpec.builder("cat").timeout(Duration.ofSeconds(30)).build()));
            starter.start();
            starter.join();
            try (ProgramSession s = holder[0]) {
                Thread.sleep(300);
                s.write("still-here", true);
                ProgramPoll p = awaitOutput(s, "still-here");
                assertThat(p.output()).isEqualTo("still-here\n");
                assertThat(p.running()).isTrue();
            }
        }
    }

    @Test
    void should_execute_code_blocks_as_code_executor_and_remove_root_on_close() {
        Path root = tmp.resolve("r");
        SandboxEngine e = SandboxEngine.builder().rootDir(root).build();
        CodeExecutionResult r = e.executeCode(new CodeExecutionInput(java.util.List.of(
                CodeBlock.of("python", "import os\nopen(os.environ['OUTPUT_DIR'] + '/a.txt', 'w').write('x')\n"
                        + "print(6 * 7)")), "conversation-1", null));
        assertThat(r.exitCode()).isZero();
        assertThat(r.output()).contains("42");
        assertThat(r.outputFiles()).extracting(f -> f.name()).contains("out/a.txt");
        e.close();
        assertThat(root.resolve("workspaces")).doesNotExist();
        assertThat(root.resolve("state")).doesNotExist();
        e.close();
    }

    /**
     * Polls until the session's output contains {@code expected} or it ends; bounded by a minute, not a timing margin:
     * a loaded machine only makes it take longer.
     */
    private static ProgramPoll awaitOutput(ProgramSession s, String expected) {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        ProgramPoll p = s.await(Duration.ofMillis(200), 0, 100);
        while (!p.output().contains(expected) && p.running() && System.nanoTime() < deadline) {
            p = s.await(Duration.ofMillis(200), 0, 100);
        }
        return p;
    }
}
