package dev.codeexec.sandbox;

import static dev.codeexec.sandbox.SandboxTesting.python;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Host-wide kernel state: nothing a program does in the sandbox may change a setting of the host. Every write here is
 * an identity write (the value read is written back), or an open for writing that writes nothing, so a test that
 * fails never changes the host.
 */
class SandboxHostStateIT extends AbstractSandboxIT {

    /** Tries to write back what each file holds; prints "ok" or the errno. */
    private static final String IDENTITY_WRITES = SandboxTesting.TRY
            + "def identity(p):\n"
            + "    v = open(p, 'rb').read()\n"
            + "    fd = os.open(p, os.O_WRONLY)\n"
            + "    try:\n"
            + "        os.write(fd, v)\n"
            + "    finally:\n"
            + "        os.close(fd)\n"
            + "def open_only(p):\n"
            + "    os.close(os.open(p, os.O_WRONLY))\n"
            + "for p in ['/proc/sys/kernel/core_pattern', '/proc/sys/vm/overcommit_memory', "
            + "'/proc/sys/fs/file-max', '/proc/sys/kernel/printk_ratelimit']:\n"
            + "    print(p, attempt(lambda: identity(p)))\n"
            + "for p in ['/proc/sysrq-trigger', '/sys/kernel/mm/transparent_hugepage/enabled', "
            + "'/sys/kernel/profiling', '/proc/self/oom_score_adj']:\n"
            + "    if os.path.exists(p):\n"
            + "        print(p, attempt(lambda: open_only(p)))\n"
            + "print('uid', os.getuid(), os.geteuid(), os.getgid())\n"
            + "print('status', 'Name:' in open('/proc/self/status').read())\n"
            + "open(os.environ['OUTPUT_DIR'] + '/mine.txt', 'w').write('written')\n"
            + "os.mkdir(os.environ['WORK_DIR'] + '/private')\n"
            + "open(os.environ['WORK_DIR'] + '/private/x', 'w').write('x')\n"
            + "os.chmod(os.environ['WORK_DIR'] + '/private', 0)\n"
            + "print('workspace ok')\n";

    @Test
    void should_refuse_identity_writes_to_host_wide_kernel_settings_and_run_as_a_non_root_user() throws Exception {
        RunResult r = python(engine, ws, IDENTITY_WRITES);
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        for (String p : new String[]{"/proc/sys/kernel/core_pattern", "/proc/sys/vm/overcommit_memory",
                "/proc/sys/fs/file-max", "/proc/sys/kernel/printk_ratelimit", "/proc/sysrq-trigger",
                "/sys/kernel/mm/transparent_hugepage/enabled", "/sys/kernel/profiling"}) {
            if (r.stdout().contains(p + " ")) {
                assertThat(r.stdout()).containsPattern(java.util.regex.Pattern.quote(p) + " E(ROFS|ACCES|PERM)");
            }
        }
        assertThat(r.stdout()).contains("/proc/sys/kernel/core_pattern E");
        // Not root, inside or on the host (where the platform allows it, as it does for a root JVM with setpriv).
        assertThat(r.stdout()).doesNotContain("uid 0 ");
        Path mine = Path.of(ws.path(), "out/mine.txt");
        if (SandboxTesting.isRoot()) {
            assertThat((Integer) Files.getAttribute(mine, "unix:uid", LinkOption.NOFOLLOW_LINKS)).isNotZero();
        }
        // Positive control: the program reads its own process information and writes its workspace; the engine
        // reads and removes what it created, even a directory it made unreadable.
        assertThat(r.stdout()).contains("status True").contains("workspace ok");
        assertThat(engine.fs().readFile(ws, "out/mine.txt", 0, 100).contentAsString()).isEqualTo("written");
        engine.fs().delete(ws, "work/private");
        assertThat(Files.exists(Path.of(ws.path(), "work/private"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        // And a later run can change what the application put there.
        engine.fs().putFiles(ws, java.util.List.of(dev.codeexec.engine.PutFile.of("work/app.txt", "from app\n")));
        RunResult edit = SandboxTesting.sh(engine, ws, "echo edited >> app.txt && cat app.txt");
        assertThat(edit.stdout()).isEqualTo("from app\nedited\n");
    }

    @Test
    void should_keep_host_wide_settings_read_only_even_where_programs_must_run_as_root() throws Exception {
        assumeTrue(SandboxTesting.isRoot(), "only a root JVM can fall back to root");
        SandboxUser.rootForTests = true;
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root-fallback")).build()) {
            Workspace w = e.manager().createWorkspace("fallback", WorkspacePolicy.DEFAULT);
            RunResult r = python(e, w, IDENTITY_WRITES);
            assertThat(r.exitCode()).as(r.stderr()).isZero();
            // The read-only /proc holds on its own: uid 0 passes the permission checks of /proc/sys.
            assertThat(r.stdout()).contains("uid 0 0 0").contains("/proc/sys/kernel/core_pattern EROFS")
                    .contains("/proc/sys/vm/overcommit_memory EROFS").contains("/proc/sys/fs/file-max EROFS");
            // Positive control: the workspace (root's, here) is still the program's to write.
            assertThat(r.stdout()).contains("workspace ok");
            assertThat(e.fs().readFile(w, "out/mine.txt", 0, 100).contentAsString()).isEqualTo("written");
        } finally {
            SandboxUser.rootForTests = false;
        }
    }

    @Test
    void should_refuse_a_sandbox_user_it_could_not_keep_apart_and_a_root_it_could_not_reach() throws Exception {
        assumeTrue(SandboxTesting.isRoot(), "only a root JVM changes the program's user");
        // A user id of a host account: a process of that account would own every sandbox's user namespace.
        assertThatThrownBy(() -> SandboxEngine.builder().rootDir(tmp.resolve("r1")).sandboxUser(1, 1).build())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("belongs to the host account");
        // A sandbox root below a private directory: bubblewrap, running as the sandbox user, could not reach it.
        Path hidden = Files.createDirectories(tmp.resolve("private"));
        Files.setPosixFilePermissions(hidden, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
        assertThatThrownBy(() -> SandboxEngine.builder().rootDir(hidden.resolve("root")).build())
                .isInstanceOf(dev.codeexec.engine.BackendUnavailableException.class)
                .hasMessageContaining("'" + hidden + "' is not searchable");
        // Positive control: another unused id works, and programs run as it.
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("r2")).sandboxUser(99998, 99998)
                .build()) {
            Workspace w = e.manager().createWorkspace("u", WorkspacePolicy.DEFAULT);
            assertThat(SandboxTesting.sh(e, w, "id -u; id -g").stdout()).isEqualTo("99998\n99998\n");
        }
    }

    @Test
    void should_refuse_write_grants_into_proc_sys_and_dev() {
        for (String p : new String[]{"/proc/sys", "/sys/kernel", "/sys", "/dev/shm", "/proc"}) {
            assertThatThrownBy(() -> PermissionProfile.workspaceWrite().withWritePaths(p))
                    .as(p).isInstanceOf(InvalidSpecException.class).hasMessageContaining("host-wide");
        }
        // Positive control: reading them is fine (the sandbox shows its own /proc and the host's /sys read-only).
        assertThat(PermissionProfile.workspaceWrite().withReadPaths("/sys/kernel")).isNotNull();
    }

    @Test
    void should_remount_a_kernel_file_system_inside_a_write_grant_read_only() throws Exception {
        assumeTrue(SandboxTesting.isRoot(), "mounting a file system on the host needs root");
        Path grant = Files.createDirectories(tmp.resolve("grant"));
        Path sys = Files.createDirectories(grant.resolve("sys"));
        Files.writeString(grant.resolve("notes.txt"), "notes");
        SandboxTesting.claimForSandbox(grant);
        Process mount = new ProcessBuilder("mount", "-t", "sysfs", "sysfs", sys.toString()).inheritIO().start();
        assertThat(mount.waitFor(30, TimeUnit.SECONDS) && mount.exitValue() == 0).as("mount sysfs").isTrue();
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root2"))
                .profile(PermissionProfile.workspaceWrite().withWritePaths(grant.toString())).build()) {
            Workspace w = e.manager().createWorkspace("k", WorkspacePolicy.DEFAULT);
            RunResult r = python(e, w, SandboxTesting.TRY
                    // The last mount at a path is the one in effect (the host's view of it lies underneath).
                    + "line = [l for l in open('/proc/self/mountinfo') if l.split()[4] == '" + sys + "'][-1]\n"
                    + "print('options', line.split()[5])\n"
                    + "print('open', attempt(lambda: os.close(os.open('" + sys
                    + "/kernel/mm/transparent_hugepage/enabled', os.O_WRONLY))))\n"
                    + "open('" + grant + "/out.txt', 'w').write('granted')\n"
                    + "print('grant ok')\n");
            assertThat(r.exitCode()).as(r.stderr()).isZero();
            assertThat(r.stdout()).containsPattern("options ro[,\\n]").containsPattern("open E(ROFS|ACCES)");
            // Positive control: the rest of the grant is writable.
            assertThat(r.stdout()).contains("grant ok");
            assertThat(Files.readString(grant.resolve("out.txt"))).isEqualTo("granted");
        } finally {
            new ProcessBuilder("umount", "-l", sys.toString()).inheritIO().start().waitFor(30, TimeUnit.SECONDS);
        }
    }
}
