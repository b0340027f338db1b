package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.dockerjava.api.command.InspectContainerResponse;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.WorkspacePolicy;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a workspace container survives: its own runs signalling PID 1, a stop of the container (as a Docker engine
 * restart leaves it), and what it does not: removal with its volume. Also who runs: a non-root user by default.
 */
class ContainerWorkspaceSurvivalIT {

    @BeforeAll
    static void requireDocker() {
        ContainerTesting.requireDocker();
    }

    private static RunResult sh(ContainerEngine engine, Workspace ws, String script) {
        return engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c", script).build());
    }

    private static String read(ContainerEngine engine, Workspace ws, String path) {
        return engine.fs().readFile(ws, path, 0, 4096).contentAsString();
    }

    private static InspectContainerResponse.ContainerState state(ContainerEngine engine, Workspace ws) {
        return engine.docker().control().inspectContainerCmd(engine.containerId(ws)).exec().getState();
    }

    /** uid -1: the default user; 0: root (without capabilities), which could signal a root PID 1. */
    @ParameterizedTest
    @ValueSource(ints = {-1, 0})
    void should_keep_pid_1_and_the_files_when_a_run_signals_pid_1(int uid) {
        ContainerEngine.Builder b = ContainerTesting.engine();
        if (uid >= 0) {
            b.user(uid, uid);
        }
        try (ContainerEngine engine = b.build()) {
            Workspace ws = engine.manager().createWorkspace("pid1", WorkspacePolicy.DEFAULT);
            assertThat(sh(engine, ws, "echo kept > work/keep.txt").exitCode()).isZero();
            String startedAt = state(engine, ws).getStartedAt();

            RunResult attack = sh(engine, ws, "for s in TERM INT HUP QUIT USR1 USR2 ABRT ALRM KILL STOP; do "
                    + "kill -s $s 1 2>/dev/null; done; echo sent");

            assertThat(attack.stdout()).isEqualTo("sent\n");
            assertThat(sh(engine, ws, "cat work/keep.txt").stdout()).isEqualTo("kept\n");
            InspectContainerResponse.ContainerState after = state(engine, ws);
            assertThat(after.getRunning()).isTrue();
            assertThat(after.getStartedAt()).as("PID 1 never ended, no restart was needed").isEqualTo(startedAt);
        }
    }

    @Test
    void should_deliver_signals_to_the_runs_own_processes_when_pid_1_ignores_them() {
        try (ContainerEngine engine = ContainerTesting.engine().build()) {
            Workspace ws = engine.manager().createWorkspace("signals", WorkspacePolicy.DEFAULT);

            RunResult r = sh(engine, ws, "sleep 30 & p=$!; kill -TERM $p; wait $p; echo $?");

            assertThat(r.stdout()).isEqualTo("143\n");
        }
    }

    @Test
    void should_start_a_stopped_container_again_with_its_files_when_the_engine_restarted() {
        try (ContainerEngine engine = ContainerTesting.engine().build()) {
            Workspace ws = engine.manager().createWorkspace("restart", WorkspacePolicy.DEFAULT);
            assertThat(sh(engine, ws, "echo kept > work/keep.txt").exitCode()).isZero();
            // What a Docker engine restart leaves: the container Exited, its volume still there.
            engine.docker().control().stopContainerCmd(engine.containerId(ws)).withTimeout(0).exec();
            assertThat(state(engine, ws).getRunning()).isFalse();

            assertThat(read(engine, ws, "work/keep.txt"))
                    .isEqualTo("kept\n");
            assertThat(sh(engine, ws, "cat work/keep.txt; echo more >> work/keep.txt").stdout()).isEqualTo("kept\n");
            assertThat(state(engine, ws).getRunning()).isTrue();

            engine.docker().control().stopContainerCmd(engine.containerId(ws)).withTimeout(0).exec();
            assertThat(sh(engine, ws, "cat work/keep.txt").stdout()).as("a run first").isEqualTo("kept\nmore\n");
        }
    }

    @Test
    void should_declare_the_workspace_gone_when_its_container_and_volume_were_removed() {
        try (ContainerEngine engine = ContainerTesting.engine().build()) {
            Workspace ws = engine.manager().createWorkspace("removed", WorkspacePolicy.DEFAULT);
            assertThat(sh(engine, ws, "echo kept > work/keep.txt").exitCode()).isZero();
            engine.docker().control().removeContainerCmd(engine.containerId(ws)).withForce(true)
                    .withRemoveVolumes(true).exec();

            assertThatThrownBy(() -> sh(engine, ws, "true")).isInstanceOf(WorkspaceGoneException.class);
            assertThatThrownBy(() -> read(engine, ws, "work/keep.txt"))
                    .isInstanceOf(WorkspaceGoneException.class);
        }
    }

    @Test
    void should_run_as_a_non_root_user_with_working_tools_when_no_user_is_configured() {
        try (ContainerEngine engine = ContainerTesting.engine().build()) {
            Workspace ws = engine.manager().createWorkspace("user", WorkspacePolicy.DEFAULT);
            engine.fs().putFiles(ws, List.of(PutFile.of("work/in.txt", "staged")));

            RunResult r = sh(engine, ws, "id -u; cat work/in.txt; echo; echo w > work/w.txt && echo work-ok; "
                    + "echo o > out/o.txt && echo out-ok; echo h > \"$HOME/h\" && echo home-ok; "
                    + "echo t > \"$TMPDIR/t\" && echo tmpdir-ok; echo s > /tmp/s && echo tmp-ok; "
                    + "python3 -c 'import os; print(\"py\", os.getuid())'; echo appended >> work/in.txt");

            assertThat(r.stderr()).isEmpty();
            assertThat(r.stdout()).isEqualTo(ContainerEngine.DEFAULT_UID + "\nstaged\nwork-ok\nout-ok\nhome-ok\n"
                    + "tmpdir-ok\ntmp-ok\npy " + ContainerEngine.DEFAULT_UID + "\n");
            // The engine's file operations read and replace what runs wrote, and runs what they wrote.
            assertThat(read(engine, ws, "work/w.txt")).isEqualTo("w\n");
            assertThat(read(engine, ws, "work/in.txt"))
                    .isEqualTo("stagedappended\n");
            engine.fs().putFiles(ws, List.of(PutFile.of("work/w.txt", "replaced")));
            engine.fs().delete(ws, "out/o.txt");
            assertThat(sh(engine, ws, "cat work/w.txt; ls out").stdout()).isEqualTo("replaced");
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 2000})
    void should_run_as_the_configured_user_when_one_is_set(int uid) {
        try (ContainerEngine engine = ContainerTesting.engine().user(uid, uid).build()) {
            Workspace ws = engine.manager().createWorkspace("configured", WorkspacePolicy.DEFAULT);

            RunResult r = sh(engine, ws, "id -u; echo x > work/x.txt && echo ok");

            assertThat(r.stdout()).isEqualTo(uid + "\nok\n");
            assertThat(read(engine, ws, "work/x.txt")).isEqualTo("x\n");
        }
    }
}
