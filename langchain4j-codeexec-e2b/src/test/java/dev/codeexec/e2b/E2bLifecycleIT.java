package dev.codeexec.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Who owns which sandbox, and when it goes: every sandbox the engine created is killed at close and when its
 * workspace is removed, a failed setup kills the sandbox it was setting up, a sandbox that ends under a run is
 * reported as gone, a busy sandbox is renewed before its timeout, internet access is off unless asked for.
 */
class E2bLifecycleIT {

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.host("e2b-lifecycle");

    @Test
    void should_kill_every_sandbox_it_created_at_close_and_at_cleanup() {
        E2bEngine engine = FAKE.engine().build();
        List<String> ids = new ArrayList<>();
        Workspace first = null;
        for (int i = 0; i < 3; i++) {
            Workspace ws = engine.manager().createWorkspace("c" + i, WorkspacePolicy.DEFAULT);
            first = first == null ? ws : first;
            ids.add(engine.sandboxId(ws));
        }
        assertThat(FAKE.fake().live()).containsAll(ids);

        engine.manager().cleanup(first);
        assertThat(FAKE.fake().live()).doesNotContain(ids.get(0)).contains(ids.get(1), ids.get(2));
        engine.close();

        assertThat(FAKE.fake().live()).doesNotContainAnyElementsOf(ids);
        assertThat(FAKE.fake().killed()).containsAll(ids);
    }

    @Test
    void should_remove_a_shared_workspace_with_its_session_and_kill_the_shared_sandbox_at_close() throws Exception {
        E2bEngine engine = FAKE.engine().workspaceMode(WorkspaceMode.SHARED_SANDBOX).build();
        Workspace a = engine.manager().createWorkspace("a", WorkspacePolicy.DEFAULT);
        Workspace b = engine.manager().createWorkspace("b", WorkspacePolicy.DEFAULT);
        String id = engine.sandboxId(a);
        assertThat(engine.sandboxId(b)).isEqualTo(id);
        String marker = "3" + System.nanoTime() % 100000 + ".5";
        ProgramSession s = engine.interactive().orElseThrow().startProgram(a, RunProgramSpec.builder("sleep")
                .args(marker).timeout(Duration.ofMinutes(5)).build());
        assertThat(running(marker)).isTrue();

        engine.manager().cleanup(a);

        assertThat(Files.exists(Path.of(a.path()))).isFalse();
        assertThat(Files.exists(Path.of(b.path()))).isTrue();
        assertThat(running(marker)).as("the removed workspace's program").isFalse();
        assertThat(FAKE.fake().live()).contains(id);
        s.close();
        engine.close();
        assertThat(FAKE.fake().live()).doesNotContain(id);
    }

    @Test
    void should_use_a_shared_sandbox_it_did_not_create_without_killing_it() throws Exception {
        String id;
        try (E2bControlPlane api = E2bControlPlane.create(E2bConfig.builder().environment(java.util.Map.of())
                .apiKey(FakeE2b.API_KEY).apiUrl(FAKE.fake().url()).build())) {
            id = api.create(SandboxSpec.builder("base").timeout(Duration.ofHours(1)).build()).sandboxId();
        }
        E2bEngine engine = FAKE.engine().sharedSandbox(id).build();
        Workspace a = engine.manager().createWorkspace("a", WorkspacePolicy.DEFAULT);
        Workspace b = engine.manager().createWorkspace("b", WorkspacePolicy.DEFAULT);
        assertThat(engine.sandboxId(a)).isEqualTo(id).isEqualTo(engine.sandboxId(b));
        assertThat(engine.describe().networkAllowed()).as("what E2B reports for that sandbox").isFalse();

        engine.close();

        assertThat(FAKE.fake().live()).contains(id);
        assertThat(Files.exists(Path.of(a.path()))).isFalse();
        assertThat(Files.exists(Path.of(b.path()))).isFalse();
        assertThat(FAKE.fake().sandbox(id).endAt()).isAfter(java.time.Instant.now().plus(Duration.ofMinutes(50)));
        FAKE.fake().expire(id);
    }

    @Test
    void should_kill_the_sandbox_when_its_setup_fails() {
        int before = FAKE.fake().created().size();
        E2bEngine engine = FAKE.engine().user("nosuchuser").build();

        assertThatThrownBy(() -> engine.manager().createWorkspace("x", WorkspacePolicy.DEFAULT))
                .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("no user 'nosuchuser'");
        List<String> made = FAKE.fake().created().subList(before, FAKE.fake().created().size());
        assertThat(made).hasSize(1);
        assertThat(FAKE.fake().live()).doesNotContain(made.get(0));
        engine.close();
    }

    @Test
    void should_report_a_sandbox_that_ends_under_a_run_as_gone_and_fail_fast_afterwards() throws Exception {
        try (E2bEngine engine = FAKE.engine().build()) {
            Workspace ws = engine.manager().createWorkspace("expiring", WorkspacePolicy.DEFAULT);
            String id = engine.sandboxId(ws);
            CompletableFuture<RunResult> run = CompletableFuture.supplyAsync(() -> engine.runner().runProgram(ws,
                    RunProgramSpec.builder("sh").args("-c", "echo started; sleep 300").timeout(Duration.ofMinutes(5))
                            .build()));
            waitFor(() -> FAKE.fake().sandbox(id) != null && FAKE.fake().sandbox(id).envd.running() > 0);

            FAKE.fake().expire(id);
            Throwable t = catchThrowable(() -> run.get(60, TimeUnit.SECONDS));

            assertThat(t).hasCauseInstanceOf(E2bSandboxGoneException.class);
            assertThat(((E2bSandboxGoneException) t.getCause()).sandboxId()).isEqualTo(id);
            FAKE.fake().clearRequests();
            assertThatThrownBy(() -> engine.fs().putFiles(ws, List.of(PutFile.of("work/x", "x"))))
                    .isInstanceOf(E2bSandboxGoneException.class);
            assertThat(FAKE.fake().requests()).as("a sandbox known to be gone is not asked again").isEmpty();
        }
    }

    @Test
    void should_renew_a_busy_sandbox_before_its_timeout() throws Exception {
        try (E2bEngine engine = FAKE.engine().sandboxTimeout(Duration.ofSeconds(60)).build()) {
            Workspace ws = engine.manager().createWorkspace("long", WorkspacePolicy.DEFAULT);
            String id = engine.sandboxId(ws);

            // The run lasts until the renewer (every 20 s) has renewed its sandbox: an event, not a fixed sleep, so a
            // slow machine only makes it longer.
            CompletableFuture<RunResult> run = CompletableFuture.supplyAsync(() -> engine.runner().runProgram(ws,
                    RunProgramSpec.builder("sh").args("-c", "while [ ! -e work/renewed ]; do sleep 0.2; done; "
                            + "echo done").timeout(Duration.ofMinutes(5)).build()));
            waitFor(() -> FAKE.fake().requests().stream()
                    .anyMatch(q -> q.path().equals("/sandboxes/" + id + "/timeout")));
            Files.createFile(Path.of(ws.path(), "work", "renewed"));
            RunResult r = run.get(5, TimeUnit.MINUTES);

            assertThat(r.stdout()).isEqualTo("done\n");
            assertThat(FAKE.fake().live()).contains(id);
        }
    }

    @Test
    void should_let_an_idle_sandbox_expire_by_its_timeout_and_then_report_its_workspace_gone() throws Exception {
        try (E2bEngine engine = FAKE.engine().sandboxTimeout(Duration.ofSeconds(10)).build()) {
            Workspace ws = engine.manager().createWorkspace("idle", WorkspacePolicy.DEFAULT);
            String id = engine.sandboxId(ws);

            waitFor(() -> !FAKE.fake().live().contains(id));

            assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("true").build()))
                    .isInstanceOf(E2bSandboxGoneException.class);
        }
    }

    @Test
    void should_keep_internet_access_off_unless_asked_for_and_say_so() {
        try (E2bEngine off = FAKE.engine().build(); E2bEngine on = FAKE.engine().internetAccess(true).build()) {
            Workspace a = off.manager().createWorkspace("off", WorkspacePolicy.DEFAULT);
            Workspace b = on.manager().createWorkspace("on", WorkspacePolicy.DEFAULT);

            assertThat(off.describe().networkAllowed()).isFalse();
            assertThat(FAKE.fake().sandbox(off.sandboxId(a)).internet).isFalse();
            assertThat(on.describe().networkAllowed()).isTrue();
            assertThat(FAKE.fake().sandbox(on.sandboxId(b)).internet).isTrue();
        }
    }

    private static boolean running(String marker) throws Exception {
        Process p = new ProcessBuilder("pgrep", "-f", "sleep " + marker).start();
        return p.waitFor() == 0;
    }

    private static void waitFor(java.util.function.BooleanSupplier c) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (!c.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("condition not met within 3 minutes");
            }
            Thread.sleep(20);
        }
    }
}
