package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Preflight with stand-in bubblewrap executables that fail the way real hosts do, and the real one where a probe must
 * pass. Every failure is an exception before anything runs; nothing falls back to running unsandboxed.
 */
class PreflightTest {

    @TempDir
    Path tmp;

    @AfterEach
    void reset() {
        Preflight.probeTimeout = Duration.ofSeconds(10);
    }

    private Path fakeBwrap(String name, String body) throws IOException {
        Path p = tmp.resolve(name);
        Files.writeString(p, "#!/bin/sh\necho run >> " + tmp.resolve(name + ".count") + "\n" + body + "\n");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        // The probe runs bubblewrap as the sandbox user when the JVM is root: it must be able to count.
        Path count = Files.createFile(tmp.resolve(name + ".count"));
        Files.setPosixFilePermissions(count, PosixFilePermissions.fromString("rw-rw-rw-"));
        return p;
    }

    private long runs(String name) throws IOException {
        Path c = tmp.resolve(name + ".count");
        return Files.exists(c) ? Files.readAllLines(c).size() : 0;
    }

    private SandboxEngine.Builder engineWith(Path bwrap) {
        return SandboxEngine.builder().rootDir(tmp.resolve("root-" + bwrap.getFileName())).bwrapPath(bwrap);
    }

    @Test
    void should_fail_closed_with_install_advice_when_bubblewrap_is_missing() {
        assertThatThrownBy(() -> engineWith(tmp.resolve("no-bwrap")).build())
                .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("Install bubblewrap")
                .hasMessageContaining("never runs programs without the sandbox");
        assertThat(tmp.resolve("root-no-bwrap")).doesNotExist();
    }

    @Test
    void should_explain_missing_user_namespaces_and_cache_the_failure() throws IOException {
        Path bwrap = fakeBwrap("no-userns",
                "echo 'bwrap: Creating new namespace failed: Operation not permitted' >&2; exit 1");
        assertThatThrownBy(() -> engineWith(bwrap).build()).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("User namespaces are not available")
                .hasMessageContaining("Creating new namespace failed");
        // A root JVM probes as the sandbox user first, then as root (a host may refuse user namespaces to
        // unprivileged users only); either way the outcome is cached.
        long probes = runs("no-userns");
        assertThat(probes).isBetween(1L, 2L);
        assertThatThrownBy(() -> engineWith(bwrap).build()).isInstanceOf(BackendUnavailableException.class);
        assertThat(runs("no-userns")).as("a definitive failure is cached").isEqualTo(probes);
    }

    @Test
    void should_refuse_host_without_fresh_proc_unless_weaker_mode_is_opted_into() throws IOException {
        SandboxTesting.requireSandbox();
        Path bwrap = fakeBwrap("no-proc", "for a in \"$@\"; do if [ \"$a\" = --proc ]; then "
                + "echo \"bwrap: Can't mount proc on /newroot/proc: Operation not permitted\" >&2; exit 1; fi; done\n"
                + "exec /usr/bin/bwrap \"$@\"");
        assertThatThrownBy(() -> engineWith(bwrap).build()).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("systempaths=unconfined").hasMessageContaining("ALLOW_NO_PROC");

        try (SandboxEngine e = engineWith(bwrap).preflightMode(PreflightMode.ALLOW_NO_PROC).build()) {
            Workspace ws = e.manager().createWorkspace("np", WorkspacePolicy.DEFAULT);
            RunResult r = SandboxTesting.python(e, ws, "import os\nprint('proc', os.listdir('/proc'))\n"
                    + "print('home-hidden', not os.path.exists('/root/.bashrc'))\n");
            assertThat(r.stdout()).contains("proc []").contains("home-hidden True");
        }
    }

    @Test
    void should_refuse_a_bubblewrap_that_cannot_bind_verified_descriptors() throws IOException {
        SandboxTesting.requireSandbox();
        // Upstream 0.8.0 has no --ro-bind-fd: every run would bind workspace paths by name, which a concurrent
        // program can redirect. The preflight refuses it instead of the first run with a .git directory.
        Path bwrap = fakeBwrap("no-bind-fd", "for a in \"$@\"; do if [ \"$a\" = --ro-bind-fd ]; then "
                + "echo 'bwrap: Unknown option --ro-bind-fd' >&2; exit 1; fi; done\nexec /usr/bin/bwrap \"$@\"");
        assertThatThrownBy(() -> engineWith(bwrap).build()).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("--ro-bind-fd").hasMessageContaining("0.10.0 or newer");
    }

    @Test
    void should_not_cache_a_transient_failure() throws IOException {
        Preflight.probeTimeout = Duration.ofMillis(500);
        Path bwrap = fakeBwrap("slow", "sleep 5");
        assertThatThrownBy(() -> engineWith(bwrap).build()).isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("transient");
        assertThatThrownBy(() -> engineWith(bwrap).build()).isInstanceOf(BackendUnavailableException.class);
        assertThat(runs("slow")).as("a transient failure is probed again").isEqualTo(2);
    }

    @Test
    void should_pass_and_cache_with_real_bubblewrap() throws IOException {
        SandboxTesting.requireSandbox();
        Path bwrap = fakeBwrap("real", "exec /usr/bin/bwrap \"$@\"");
        engineWith(bwrap).build().close();
        engineWith(bwrap).build().close();
        assertThat(runs("real")).isEqualTo(1);
    }

    @Test
    void should_refuse_unsupported_operating_systems() {
        assertThatThrownBy(() -> SandboxPlatform.detect("Windows 11")).isInstanceOf(
                UnsupportedCapabilityException.class).hasMessageContaining("Windows 11")
                .hasMessageContaining("never run without a sandbox");
        assertThat(SandboxPlatform.detect("Linux")).isEqualTo(SandboxPlatform.LINUX_BWRAP);
        assertThat(SandboxPlatform.detect("Mac OS X")).isEqualTo(SandboxPlatform.MACOS_SEATBELT);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "bwrap: Can't mount proc on /newroot/proc: Operation not permitted | systempaths=unconfined",
            "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged "
                    + "user namespaces. | User namespaces",
            "bwrap: setting up uid map: Permission denied | User namespaces",
            "bwrap: Unknown option --disable-userns | --ro-bind-fd",
            "bwrap: Unknown option --ro-bind-fd | 0.10.0 or newer",
            "bwrap: prctl(PR_SET_SECCOMP): Invalid argument | seccomp",
            "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted | loopback",
            "bwrap: Failed to make / slave: Permission denied | Mounts are not permitted",
            "something else entirely | Reading preflight errors",
    })
    void should_tell_the_operator_what_to_fix(String stderr, String advice) {
        assertThat(Preflight.explain(stderr, Preflight.isProcFailure(stderr))).contains(advice)
                .contains(stderr.strip()).endsWith("The engine never runs programs without the sandbox.");
    }
}
