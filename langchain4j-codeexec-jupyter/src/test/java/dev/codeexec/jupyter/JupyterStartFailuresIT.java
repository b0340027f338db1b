package dev.codeexec.jupyter;

import static dev.codeexec.jupyter.JupyterTesting.cell;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.testing.Requirements;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A kernel that cannot start is a clear {@link BackendUnavailableException}, after a bounded wait, leaving nothing. */
class JupyterStartFailuresIT {

    @TempDir
    Path dir;

    @Test
    void should_say_what_was_tried_when_the_configured_python_does_not_exist() {
        try (JupyterEngine engine = JupyterEngine.builder().python(dir.resolve("no/python3").toString()).build()) {
            Workspace ws = engine.manager().createWorkspace("w", WorkspacePolicy.DEFAULT);

            assertThatThrownBy(() -> cell(engine, ws, "1")).isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("no Python that can run a Jupyter kernel was found")
                    .hasMessageContaining("no/python3 (not an executable file)")
                    .hasMessageContaining("apt-get install python3-ipykernel");
            // Programs do not need the kernel.
            assertThat(engine.runner().runProgram(ws, RunProgramSpec.builder("true").build()).exitCode()).isZero();
        }
    }

    @Test
    void should_refuse_a_configured_name_that_is_not_on_the_path() {
        try (JupyterEngine engine = JupyterEngine.builder().python("no-such-python-3f1c").build()) {
            Workspace ws = engine.manager().createWorkspace("w", WorkspacePolicy.DEFAULT);

            assertThatThrownBy(() -> cell(engine, ws, "1")).isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("'no-such-python-3f1c', was not found on the kernel environment's PATH");
        }
    }

    @Test
    void should_say_that_ipykernel_is_missing_and_fail_fast_the_second_time() throws Exception {
        String python = Requirements.requireCommand("python3");
        // A python that runs but cannot import ipykernel: the system one without its site packages.
        Path noKernel = Files.writeString(dir.resolve("python-without-ipykernel"),
                "#!/bin/sh\nexec " + python + " -S \"$@\"\n");
        Files.setPosixFilePermissions(noKernel, PosixFilePermissions.fromString("rwx------"));
        try (JupyterEngine engine = JupyterEngine.builder().python(noKernel.toString()).build()) {
            Workspace ws = engine.manager().createWorkspace("w", WorkspacePolicy.DEFAULT);

            Throwable first = catchThrowable(() -> cell(engine, ws, "1"));
            Throwable second = catchThrowable(() -> cell(engine, ws, "1"));

            assertThat(first).isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("python-without-ipykernel (ModuleNotFoundError: No module named 'ipykernel')");
            assertThat(second).isInstanceOf(BackendUnavailableException.class).hasMessage(first.getMessage());
        }
    }

    @Test
    void should_stop_waiting_for_a_kernel_that_never_answers_and_leave_no_process() throws Exception {
        String marker = "4" + System.nanoTime() % 100000 + ".25";
        try (JupyterEngine engine = JupyterEngine.builder()
                .kernelCommand(List.of("/bin/sh", "-c", "exec sleep " + marker, JupyterEngine.CONNECTION_FILE))
                .kernelStartTimeout(Duration.ofSeconds(2)).build()) {
            Workspace ws = engine.manager().createWorkspace("w", WorkspacePolicy.DEFAULT);

            assertThatThrownBy(() -> cell(engine, ws, "1")).isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("the Jupyter kernel did not become ready within 2 s (no kernel_info_reply)")
                    .hasMessageContaining("it was stopped");
            assertThat(JupyterTesting.awaitNoProcessWith("sleep " + marker, Duration.ofSeconds(30))).isEmpty();
            assertThat(engine.stateDir()).isEmptyDirectory();
        }
    }

    @Test
    void should_report_a_kernel_that_exits_at_start_with_its_status_and_last_log_line() {
        try (JupyterEngine engine = JupyterEngine.builder().kernelCommand(List.of("/bin/sh", "-c",
                "echo 'broken kernel: cannot start' >&2; exit 7", JupyterEngine.CONNECTION_FILE))
                .build()) {
            Workspace ws = engine.manager().createWorkspace("w", WorkspacePolicy.DEFAULT);

            assertThatThrownBy(() -> cell(engine, ws, "1")).isInstanceOf(BackendUnavailableException.class)
                    .hasMessageContaining("the Jupyter kernel could not start: the kernel process exited with status 7")
                    .hasMessageContaining("(last line of its log: broken kernel: cannot start)");
        }
    }

    @Test
    void should_reject_bad_settings_with_the_value_named() {
        assertThatThrownBy(() -> JupyterEngine.builder().kernelCommand(List.of("python3", "-m", "ipykernel_launcher"))
                .build()).isInstanceOf(InvalidSpecException.class).hasMessageContaining("{connection_file}");
        assertThatThrownBy(() -> JupyterEngine.builder().python("python3")
                .kernelCommand(List.of("python3", "{connection_file}")).build()).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("not both");
        assertThatThrownBy(() -> JupyterEngine.builder().kernelStartTimeout(Duration.ZERO).build())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("kernelStartTimeout (PT0S)");
        assertThatThrownBy(() -> JupyterEngine.builder().heartbeatInterval(Duration.ofSeconds(5))
                .heartbeatTimeout(Duration.ofSeconds(5)).build()).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("heartbeatTimeout (PT5S) must be longer than heartbeatInterval (PT5S)");
    }
}
