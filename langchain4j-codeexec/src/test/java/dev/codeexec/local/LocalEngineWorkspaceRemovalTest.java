package dev.codeexec.local;

import static dev.codeexec.testing.HostProcesses.killMarked;
import static dev.codeexec.testing.HostProcesses.uniqueSleep;
import static dev.codeexec.testing.HostProcesses.waitFor;
import static dev.codeexec.testing.HostProcesses.withMarker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.WorkspaceTools;
import dev.codeexec.workspace.WorkspaceRegistry;
import dev.langchain4j.invocation.InvocationContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Removing a workspace stops its sessions first, however it is removed: reaped by a registry after idling, cleaned up
 * by the caller, closed by the tools. Each case is paired with the session that must keep running (the workspace is
 * not idle long enough, or another workspace is removed).
 */
class LocalEngineWorkspaceRemovalTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    LocalEngine engine;
    String marker;

    @BeforeEach
    void setUp() {
        engine = LocalEngine.builder().baseDir(tmp.resolve("base")).build();
        marker = uniqueSleep();
    }

    @AfterEach
    void tearDown() {
        try {
            engine.close();
        } finally {
            killMarked(marker);
        }
    }

    private ProgramSession startSleeper(Workspace ws) {
        ProgramSession s = engine.interactive().orElseThrow().startProgram(ws, RunProgramSpec.builder("sh")
                .args("-c", "echo up; exec sleep " + marker).timeout(Duration.ofMinutes(5)).build());
        waitFor(() -> s.poll(0, 100).output().contains("up"), "the session to start", WAIT);
        return s;
    }

    @Test
    void should_stop_sessions_of_an_idle_workspace_when_the_registry_reaps_it() {
        AtomicLong now = new AtomicLong();
        AtomicReference<Workspace> ws = new AtomicReference<>();
        WorkspaceRegistry registry = WorkspaceRegistry.builder(engine).idleTtl(Duration.ofMinutes(1))
                .clock(now::get).backgroundReaper(false).build();
        ProgramSession s = registry.withWorkspace("conversation", w -> {
            ws.set(w);
            return startSleeper(w);
        });
        Path dir = Path.of(ws.get().path());

        // Control: idle for less than the TTL, nothing is reaped and the session keeps running.
        now.addAndGet(Duration.ofSeconds(30).toNanos());
        assertThat(registry.reapIdle()).isZero();
        assertThat(s.poll(0, 100).running()).isTrue();
        assertThat(dir).isDirectory();
        assertThat(withMarker(marker)).isNotEmpty();

        now.addAndGet(Duration.ofMinutes(2).toNanos());
        assertThat(registry.reapIdle()).isEqualTo(1);

        assertThat(s.poll(0, 100).running()).isFalse();
        assertThat(s.exitCode()).isPresent();
        assertThat(dir).doesNotExist();
        waitFor(() -> withMarker(marker).isEmpty(), "the session's program to die", WAIT);
    }

    @Test
    void should_stop_only_the_removed_workspaces_sessions_when_it_is_cleaned_up() {
        Workspace removed = engine.manager().createWorkspace("removed", WorkspacePolicy.DEFAULT);
        Workspace kept = engine.manager().createWorkspace("kept", WorkspacePolicy.DEFAULT);
        ProgramSession gone = startSleeper(removed);
        ProgramSession stays = engine.interactive().orElseThrow().startProgram(kept, RunProgramSpec.builder("cat")
                .timeout(Duration.ofMinutes(5)).build());

        engine.manager().cleanup(removed);

        assertThat(gone.poll(0, 100).running()).isFalse();
        assertThat(Path.of(removed.path())).doesNotExist();
        waitFor(() -> withMarker(marker).isEmpty(), "the removed workspace's program to die", WAIT);
        // Control: the other workspace's session is untouched and still answers.
        stays.write("still here", true);
        waitFor(() -> stays.poll(0, 100).output().contains("still here"), "the kept session to echo", WAIT);
        assertThat(stays.poll(0, 100).running()).isTrue();
        assertThat(Path.of(kept.path())).isDirectory();
        // Nothing starts in the removed workspace afterwards.
        assertThatThrownBy(() -> startSleeper(removed)).isInstanceOf(CodeExecException.class);
        stays.close();
    }

    @Test
    void should_report_a_tool_session_as_ended_when_its_idle_workspace_is_reaped() throws Exception {
        try (CodeExecution exec = CodeExecution.builder().engine(engine).workspaceIdleTtl(Duration.ofSeconds(1))
                .build()) {
            WorkspaceTools tools = exec.tools();
            InvocationContext ctx = InvocationContext.builder().invocationId(UUID.randomUUID())
                    .chatMemoryId("idle-conversation").timestampNow().build();
            String started = tools.workspaceExec("sleep " + marker, null, null, null, 300, true, ctx);
            String id = started.replaceAll("(?s).*session_id: (s_[0-9a-f]+).*", "$1");
            assertThat(id).as(started).startsWith("s_");
            assertThat(started).contains("status: running");
            assertThat(withMarker(marker)).isNotEmpty();

            // The reaper runs every second; the workspace idles out after one, and its removal stops the session.
            waitFor(() -> withMarker(marker).isEmpty(), "the reaped workspace's session to die", WAIT);
            waitFor(() -> {
                try (var base = Files.list(tmp.resolve("base"))) {
                    return base.findAny().isEmpty();
                }
            }, "the reaped workspace to be removed", WAIT);

            String polled = tools.workspaceWriteStdin(id, "", null, null, 0, ctx);
            assertThat(polled).contains("status: exited").doesNotContain("status: running");
        }
    }
}
