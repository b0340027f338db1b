package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.model.Container;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Container lifecycle rules: close and cleanup leave nothing, the sweeper, the warm pool, the optional hardening. */
class ContainerLifecycleIT {

    @BeforeAll
    static void requireDocker() {
        ContainerTesting.requireDocker();
    }

    @Test
    void should_leave_no_container_after_close_even_with_open_workspaces() {
        ContainerEngine engine = ContainerTesting.engine().build();
        Workspace a = engine.manager().createWorkspace("a", WorkspacePolicy.DEFAULT);
        engine.manager().createWorkspace("b", WorkspacePolicy.DEFAULT);
        assertThat(ContainerTesting.containersOf(engine.instanceId())).hasSize(2)
                .anySatisfy(c -> assertThat(c.getLabels()).containsEntry(ContainerWorkspaces.LABEL_WORKSPACE, a.id()));

        engine.close();
        engine.close();

        assertThat(ContainerTesting.containersOf(engine.instanceId())).isEmpty();
    }

    @Test
    void should_sweep_containers_a_dead_process_left_and_spare_live_ones() throws Exception {
        // A leftover as a crashed JVM leaves it: labelled like a workspace container, its creating process gone.
        ContainerEngine crashed = ContainerTesting.engine().sweepLeftovers(false).build();
        Workspace ws = crashed.manager().createWorkspace("left", WorkspacePolicy.DEFAULT);
        String leftover = crashed.containerId(ws);
        String deadPid = Long.toString(deadPid());
        try (DockerConnection d = DockerConnection.open(null, null, null)) {
            // Labels cannot change on a container: make a twin of the leftover with a dead creator.
            Map<String, String> labels = new HashMap<>(d.control().inspectContainerCmd(leftover).exec().getConfig()
                    .getLabels());
            labels.put(ContainerWorkspaces.LABEL_PID, deadPid);
            labels.put(ContainerWorkspaces.LABEL_ENGINE, "crashed-engine");
            String twin = d.control().createContainerCmd(ContainerTesting.IMAGE).withLabels(labels)
                    .withCmd("true").exec().getId();
            Thread.sleep(5);

            try (ContainerEngine next = ContainerTesting.engine().build()) {
                List<String> all = d.control().listContainersCmd().withShowAll(true).exec().stream()
                        .map(Container::getId).toList();
                assertThat(all).as("the dead process's container").doesNotContain(twin);
                assertThat(all).as("a live process's container").contains(leftover);
                assertThat(next.sweepLeftovers()).isZero();
            }
        } finally {
            crashed.close();
        }
    }

    /** A pid no process has: one of a process that ended. */
    private static long deadPid() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        return p.pid();
    }

    @Test
    void should_take_workspaces_from_the_warm_pool_and_never_hand_a_container_out_twice() throws Exception {
        try (ContainerEngine engine = ContainerTesting.engine().warmPool(2, Duration.ofMinutes(5)).build()) {
            awaitPool(engine, 2);

            Workspace a = engine.manager().createWorkspace("a", WorkspacePolicy.DEFAULT);
            engine.fs().putFiles(a, List.of(PutFile.of("work/mine.txt", "a's")));
            String aId = engine.containerId(a);
            engine.manager().cleanup(a);
            Workspace b = engine.manager().createWorkspace("b", WorkspacePolicy.DEFAULT);

            assertThat(engine.containerId(b)).isNotEqualTo(aId);
            RunResult r = engine.runner().runProgram(b, RunProgramSpec.builder("ls").args("work").build());
            assertThat(r.stdout()).doesNotContain("mine.txt");
            awaitPool(engine, 2);
            assertThat(ContainerTesting.containersOf(engine.instanceId())).hasSize(3);
        }
    }

    private static void awaitPool(ContainerEngine engine, int size) throws InterruptedException {
        for (int i = 0; i < 600 && engine.pooledContainers() < size; i++) {
            Thread.sleep(100);
        }
        assertThat(engine.pooledContainers()).isEqualTo(size);
    }

    @Test
    void should_run_as_a_non_root_user_on_a_read_only_root_with_a_writable_workspace() {
        try (ContainerEngine engine = ContainerTesting.engine().user(1000, 1000).readOnlyRootFilesystem(true)
                .build()) {
            Workspace ws = engine.manager().createWorkspace("ro", WorkspacePolicy.DEFAULT);
            engine.fs().putFiles(ws, List.of(PutFile.of("work/in.txt", "staged")));

            RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c",
                    "id -u; cat work/in.txt; echo; echo made > out/made.txt && echo wrote-out; echo x > mine.txt "
                            + "&& echo wrote-root; touch /etc/evil 2>/dev/null || echo etc-refused; "
                            + "touch /tmp/t && echo tmp-ok").build());

            assertThat(r.stdout()).isEqualTo("1000\nstaged\nwrote-out\nwrote-root\netc-refused\ntmp-ok\n");
            assertThat(engine.fs().readFile(ws, "out/made.txt", 0, 100).contentAsString()).isEqualTo("made\n");
        }
    }
}
