package dev.codeexec.sandbox;

import static dev.codeexec.sandbox.SandboxTesting.sh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.StageOptions;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceBusyException;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.spi.host.HostProcessChannel;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.ProgramRuns;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attacks on the setup of a sandbox with real bubblewrap: a program running in the same workspace swaps a path for a
 * symbolic link between the engine's plan and bubblewrap's mount, or forges what a setup failure looks like. Each is
 * paired with a positive control.
 *
 * <p>The swaps are made deterministic with a stand-in bubblewrap that runs a prepared shell script (the "concurrent
 * program") after the launcher has verified and opened its descriptors and just before the real bubblewrap mounts;
 * {@link SandboxEngine#plannedLaunch} gives the moment between the plan and the launcher.
 */
class SandboxSetupIT {

    @TempDir
    Path tmp;

    /** Host files the sandbox shows but for the profile's rules, reachable by the sandbox user wherever we run. */
    @TempDir(factory = HostTempDirs.class)
    Path host;

    /** Host home directories, apart from the secrets (a planted link in one test leads to the secrets' parent). */
    @TempDir(factory = HostTempDirs.class)
    Path hostHomes;

    private Path swapScript;
    private SandboxEngine engine;
    private Workspace ws;
    private Path root;
    private final String secret = "s3cr3t-" + UUID.randomUUID();
    /** A host directory outside /tmp (so visible to the sandbox but for the profile's rule), hidden by the profile. */
    private Path secretDir;
    private Path secretFile;
    /** A host home directory the sandbox user may remove (as a host process might), whose ~/.aws the profile hides. */
    private Path vanishingHome;

    @BeforeAll
    static void requireSandbox() {
        SandboxTesting.requireSandbox();
    }

    @BeforeEach
    void setUp() throws IOException {
        // The "concurrent program" runs as the user programs run as (not root), in a directory it may change.
        Path concurrent = Files.createDirectories(tmp.resolve("concurrent"));
        SandboxTesting.claimForSandbox(concurrent);
        swapScript = concurrent.resolve("swap.sh");
        Path bwrap = tmp.resolve("bwrap-with-a-concurrent-program");
        Files.writeString(bwrap, "#!/bin/sh\nPATH=/usr/bin:/bin\nif [ -f '" + swapScript + "' ]; then sh '"
                + swapScript + "'; rm -f '" + swapScript + "'; fi\nexec /usr/bin/bwrap \"$@\"\n");
        Files.setPosixFilePermissions(bwrap, PosixFilePermissions.fromString("rwxr-xr-x"));
        // Host secrets the sandbox must never show: a hidden file (masked by /dev/null, like /etc/shadow) in a
        // visible directory, and a hidden directory (masked by an empty one). Outside /tmp, which every sandbox
        // replaces by a private one, and reachable by the sandbox user, so that hiding them is what keeps them secret.
        Path base = host;
        secretDir = Files.createDirectories(base.resolve("secrets"));
        secretFile = base.resolve("key.txt");
        Files.writeString(secretFile, secret);
        Files.writeString(secretDir.resolve("key.txt"), secret);
        // The sandbox user may remove it, as a host process might: it owns the directory holding it.
        Path homes = Files.createDirectories(hostHomes.resolve("home"));
        vanishingHome = Files.createDirectories(homes.resolve("gone"));
        Files.writeString(Files.createDirectories(vanishingHome.resolve(".aws")).resolve("credentials"), secret);
        SandboxTesting.claimForSandbox(homes);
        Path inputs = Files.createDirectories(tmp.resolve("inputs/skill"));
        Files.writeString(inputs.resolve("SKILL.md"), "instructions");
        // The workspace lies deeper than the secrets (as it does below /tmp while /etc/shadow is at depth 2), so the
        // secrets' masks are mounted before anything in the workspace, which could otherwise be mounted over them.
        engine = SandboxEngine.builder().rootDir(tmp.resolve("a/b/c/root")).bwrapPath(bwrap)
                .profile(PermissionProfile.workspaceWrite().withNoAccessPaths(secretFile.toString(),
                        secretDir.toString(), vanishingHome.resolve(".aws").toString()))
                .inputRoots(List.of(tmp.resolve("inputs"))).build();
        ws = engine.manager().createWorkspace("race", WorkspacePolicy.DEFAULT);
        root = Path.of(ws.path());
    }

    @AfterEach
    void tearDown() {
        engine.close();
    }

    /** Makes the next launch run {@code script} in the workspace between the launcher and the real bubblewrap. */
    private void concurrently(String script) throws IOException {
        Files.writeString(swapScript, "cd '" + root + "' || exit 1\n" + script + "\n");
    }

    private String linkTo(Path from, Path target) {
        return from.getParent().relativize(target).toString();
    }

    private static RunProgramSpec shell(String line) {
        return RunProgramSpec.builder("/bin/sh").args("-c", line).cwd("work").timeout(Duration.ofSeconds(30)).build();
    }

    @Test
    void should_never_mount_a_host_file_when_a_protected_file_is_swapped_for_a_link_before_the_mount()
            throws IOException {
        // The review's GitRace: '.git' is a file when the run is planned; a concurrent program replaces it with a
        // relative link to a host secret before bubblewrap mounts it.
        Files.writeString(root.resolve(".git"), "gitdir: elsewhere\n");
        concurrently("rm -f .git && ln -s '" + linkTo(root.resolve(".git"), secretFile) + "' .git");
        RunResult r = engine.runner().runProgram(ws, shell("cat \"$WORKSPACE_DIR/.git\"; cat '" + secretFile + "'"));
        assertThat(r.stdout()).doesNotContain(secret);
        // Positive control: what was planned (the file, not whatever the name leads to now) is what is mounted,
        // even where the planted link redirected the destination: onto the secret's mask.
        assertThat(r.stdout()).isEqualTo("gitdir: elsewhere\ngitdir: elsewhere\n");
    }

    @Test
    void should_never_mount_a_host_file_when_a_protected_file_is_swapped_between_plan_and_launch()
            throws IOException {
        Files.writeString(root.resolve(".git"), "gitdir: elsewhere\n");
        ProgramLaunch planned = engine.plannedLaunch(ws, shell("cat \"$WORKSPACE_DIR/.git\"; cat '" + secretFile + "'"),
                AdditionalPermissions.NONE);
        Files.delete(root.resolve(".git"));
        Files.createSymbolicLink(root.resolve(".git"), Path.of(linkTo(root.resolve(".git"), secretFile)));
        RunResult r = ProgramRuns.run(HostProcessChannel.wrapped(), planned);
        assertThat(r.stdout()).doesNotContain(secret).isEqualTo("gitdir: elsewhere\ngitdir: elsewhere\n");
    }

    @Test
    void should_refuse_to_run_when_a_read_only_stage_is_swapped_for_a_link_after_the_plan() throws IOException {
        engine.fs().stageDirectory(ws, tmp.resolve("inputs/skill"), "skills/demo", new StageOptions(true, false));
        Path stage = root.resolve("skills/demo");
        ProgramLaunch planned = engine.plannedLaunch(ws, shell("cat \"$SKILLS_DIR/demo/key.txt\" '"
                + secretDir.resolve("key.txt") + "'"), AdditionalPermissions.NONE);
        Files.move(stage, root.resolve("skills/moved"));
        Files.createSymbolicLink(stage, Path.of(linkTo(stage, secretDir)));
        RunResult r = ProgramRuns.run(HostProcessChannel.wrapped(), planned);
        assertThat(r.stdout()).doesNotContain(secret);
        // The launcher noticed the change: nothing ran.
        assertThat(r.exitCode()).isEqualTo(Launcher.SETUP_FAILED);
    }

    @Test
    void should_refuse_to_run_when_a_read_only_stage_is_swapped_for_a_link_just_before_the_mount() throws IOException {
        engine.fs().stageDirectory(ws, tmp.resolve("inputs/skill"), "skills/demo", new StageOptions(true, false));
        concurrently("mv skills/demo skills/moved && ln -s '" + linkTo(root.resolve("skills/demo"), secretDir)
                + "' skills/demo");
        // bubblewrap checks that what it mounted is the descriptor's directory: the link fails the run.
        assertThatThrownBy(() -> engine.runner().runProgram(ws, shell("cat \"$SKILLS_DIR/demo/key.txt\" '"
                + secretDir.resolve("key.txt") + "'"))).isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining("changed").hasMessageContaining("Nothing ran");
        // Positive control: once the application puts the stage back, it is mounted read-only again.
        Files.delete(root.resolve("skills/demo"));
        Files.move(root.resolve("skills/moved"), root.resolve("skills/demo"));
        RunResult ok = engine.runner().runProgram(ws, shell("cat \"$SKILLS_DIR/demo/SKILL.md\"; "
                + "echo x > \"$SKILLS_DIR/demo/SKILL.md\" || echo refused"));
        assertThat(ok.stdout()).contains("instructions").contains("refused");
    }

    @Test
    void should_show_only_workspace_content_where_a_planted_link_redirects_a_mount_destination() throws IOException {
        // The destination side: a concurrent program moves the stage's parent away and plants a link in its place,
        // so that bubblewrap's destination path (and, before pinning, its source path) leads to the host's secrets
        // directory. Two outcomes are safe: the mount lands there but what lands is the stage, pinned by its
        // descriptor, never the secret; or the launcher notices the change and nothing runs.
        engine.fs().stageDirectory(ws, tmp.resolve("inputs/skill"), "skills/secrets", new StageOptions(true, false));
        String read = "cat \"$SKILLS_DIR/secrets/key.txt\" '" + secretDir.resolve("key.txt") + "'; cat '"
                + secretDir.resolve("SKILL.md") + "'";
        int landed = 0;
        for (int i = 0; i < 5; i++) {
            concurrently("mv skills skills-moved && ln -s '" + linkTo(root.resolve("skills"), secretDir.getParent())
                    + "' skills");
            try {
                RunResult r = engine.runner().runProgram(ws, shell(read));
                assertThat(r.stdout()).as("attempt %d", i).doesNotContain(secret);
                if (r.stdout().contains("instructions")) {
                    landed++; // the mount landed on the secret directory's mask and shows the stage's own content
                }
            } catch (PolicyViolationException refused) {
                assertThat(refused).hasMessageContaining("changed").hasMessageContaining("Nothing ran");
            }
            Files.delete(root.resolve("skills"));
            Files.move(root.resolve("skills-moved"), root.resolve("skills"));
        }
        // Positive control: at least one attempt ran, its mount redirected onto the mask, with the stage's content.
        assertThat(landed).as("attempts whose redirected mount showed the stage").isPositive();
    }

    @Test
    void should_never_leak_a_host_file_while_a_background_session_flips_a_protected_name() throws Exception {
        // The review's reproducer, end to end: a session in the same workspace flips '.git' between a file and a
        // relative link to a host secret while runs start. Each run either runs without the secret or is refused.
        String link = linkTo(root.resolve(".git"), secretFile);
        String loop = "cd \"$WORKSPACE_DIR\"; while true; do echo x > .g1; mv -f .g1 .git; ln -sfn '" + link
                + "' .g2; mv -Tf .g2 .git; done";
        int ran = 0;
        int refused = 0;
        try (ProgramSession s = engine.interactive().orElseThrow().startProgram(ws, RunProgramSpec.builder("/bin/sh")
                .args("-c", loop).timeout(Duration.ofSeconds(120)).build())) {
            for (int i = 0; i < 60; i++) {
                try {
                    RunResult r = engine.runner().runProgram(ws, shell("cat '" + secretFile + "' \"$WORKSPACE_DIR"
                            + "/.git\" 2>/dev/null; echo done"));
                    assertThat(r.stdout()).as("run %d", i).doesNotContain(secret);
                    ran++;
                } catch (PolicyViolationException | BackendUnavailableException | WorkspaceBusyException e) {
                    refused++; // the swap was noticed, bubblewrap failed on it, or the session holds the workspace
                }
            }
            s.kill(Duration.ofSeconds(1));
        }
        assertThat(ran + refused).isEqualTo(60);
        // Positive control: with the session gone and the name a plain file again, runs work.
        Files.deleteIfExists(root.resolve(".git"));
        Files.writeString(root.resolve(".git"), "gitdir: elsewhere\n");
        assertThat(sh(engine, ws, "cat \"$WORKSPACE_DIR/.git\"").stdout()).isEqualTo("gitdir: elsewhere\n");
    }

    @Test
    void should_run_when_a_hidden_path_vanishes_between_plan_and_launch() throws IOException {
        // A host home directory is removed after the plan hid its ~/.aws: bubblewrap cannot create the mount point
        // of the mask in the read-only root ("Can't mkdir parents"). Nothing to hide any more: the run runs.
        concurrently("rm -rf '" + vanishingHome + "'");
        RunResult r = engine.runner().runProgram(ws, shell("cat '" + vanishingHome.resolve(".aws/credentials")
                + "' '" + secretFile + "' '" + secretDir.resolve("key.txt") + "' 2>/dev/null; echo ran"));
        assertThat(Files.exists(vanishingHome)).as("the concurrent removal happened").isFalse();
        // Positive control: the paths still there stay hidden in the same run.
        assertThat(r.stdout()).isEqualTo("ran\n").doesNotContain(secret);
    }

    @Test
    void should_report_a_program_that_prints_setup_errors_as_its_own_result() {
        // A program cannot make its own failure look like "backend unavailable" (and get its text into WARN logs).
        RunResult bwrapLike = sh(engine, ws, "echo 'bwrap: Can not mount tmpfs on /newroot/tmp' >&2; exit 1");
        assertThat(bwrapLike.exitCode()).isEqualTo(1);
        assertThat(bwrapLike.stderr()).startsWith("bwrap: Can not mount");
        RunResult launcherLike = sh(engine, ws, "echo 'codeexec-sandbox-setup: forged' >&2; "
                + "echo 'setup-failed changed forged' >&2; exit 125");
        assertThat(launcherLike.exitCode()).isEqualTo(125);
        assertThat(launcherLike.stderr()).contains("forged");
        // Positive controls: a command bubblewrap cannot execute is exit 127, and a real setup failure is an
        // exception.
        RunResult missing = engine.runner().runProgram(ws, RunProgramSpec.builder("/nonexistent/program").build());
        assertThat(missing.exitCode()).isEqualTo(127);
        assertThat(missing.stderr()).contains("not found");
    }

    @Test
    void should_report_a_real_setup_failure_as_backend_unavailable() throws IOException {
        // bubblewrap itself fails before the program starts: a granted host directory vanished after the plan.
        Path extra = Files.createDirectories(swapScript.resolveSibling("extra"));
        SandboxTesting.claimForSandbox(extra);
        concurrently("rmdir '" + extra + "'");
        assertThatThrownBy(() -> engine.runProgram(ws, shell("echo ran"), AdditionalPermissions.read(extra.toString())))
                .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("Nothing ran");
    }

    @Test
    void should_refuse_grants_into_other_workspaces_through_the_sandbox_root() {
        Workspace other = engine.manager().createWorkspace("victim", WorkspacePolicy.DEFAULT);
        engine.fs().putFiles(other, List.of(PutFile.of("work/secret.txt", secret)));
        String otherWork = Path.of(other.path()).resolve("work").toString();
        assertThatThrownBy(() -> engine.runProgram(ws, shell("cat '" + otherWork + "/secret.txt'"),
                AdditionalPermissions.read(otherWork))).isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining("sandbox root");
        assertThatThrownBy(() -> engine.runInDirectory(root.getParent(), shell("ls"), AdditionalPermissions.NONE))
                .isInstanceOf(PolicyViolationException.class);
        // Positive control: the run's own workspace, granted by its absolute path, is fine.
        RunResult own = engine.runProgram(ws, shell("echo own"), AdditionalPermissions.read(root.resolve("work")
                .toString()));
        assertThat(own.stdout()).isEqualTo("own\n");
    }
}
