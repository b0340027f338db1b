package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CommandAllowListEnforcement;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ToolCalls;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.policy.CommandPolicy;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command allow list enforced by the kernel ({@code enforceAllowList}), with real bubblewrap, Landlock and
 * noexec volumes. Every attack runs a denied program ({@code /usr/bin/id}, whose output {@code uid=} shows that it
 * ran) by another route: directly, through the dynamic loader, as a copy in the workspace, {@code /tmp} or
 * {@code /dev/shm} (directly and through the loader), through an allowed wrapper and through {@code sh}. Each is
 * refused on an engine with the setting; the same routes run {@code id} on an engine without it (so the attacks can
 * fail), and the allowed programs do their work on both.
 */
class SandboxKernelAllowListIT {

    private static final String LOADER = "/lib64/ld-linux-x86-64.so.2";
    private static final String DENIED = "/usr/bin/id";
    private static final CommandPolicy POLICY = CommandPolicy.builder().allow("ls", "cat", "cp", "env").build();

    @TempDir
    Path tmp;

    SandboxEngine guarded;
    SandboxEngine open;
    Workspace gws;
    Workspace ows;

    @BeforeAll
    static void requireKernelAllowList() {
        SandboxTesting.requireSandbox();
        Requirements.require(SandboxTesting.isRoot(), "root (the allow list needs noexec volumes: loop devices)");
        Requirements.require(Files.isExecutable(Path.of(LOADER)) && Files.isExecutable(Path.of(DENIED)),
                "x86_64 glibc with " + LOADER + " and " + DENIED);
        SandboxTesting.requireLandlock();
    }

    @BeforeEach
    void startEngines() throws IOException {
        guarded = SandboxEngine.builder().rootDir(tmp.resolve("guarded")).diskQuota(64L << 20)
                .enforceAllowList(POLICY).build();
        open = SandboxEngine.builder().rootDir(tmp.resolve("open")).diskQuota(64L << 20).build();
        gws = guarded.manager().createWorkspace("kernel", WorkspacePolicy.DEFAULT);
        ows = open.manager().createWorkspace("kernel", WorkspacePolicy.DEFAULT);
        for (Workspace w : List.of(gws, ows)) {
            Path work = Path.of(w.path(), "work");
            Files.writeString(work.resolve("note.txt"), "hello from the workspace\n");
            // A denied program the model wrote with the file tools: the application's write, executable.
            Path copy = work.resolve("id");
            Files.copy(Path.of(DENIED), copy, StandardCopyOption.REPLACE_EXISTING);
            Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxr-xr-x"));
            SandboxTesting.claimForSandbox(work);
        }
    }

    @AfterEach
    void closeEngines() {
        guarded.close();
        open.close();
    }

    /** A program run by argv in the workspace's root; the bound only stops a wedged run, it is no timing margin. */
    private static RunResult run(SandboxEngine engine, Workspace w, String cmd, String... args) {
        return engine.runner().runProgram(w, RunProgramSpec.builder(cmd).args(args).cwd(".")
                .timeout(Duration.ofSeconds(120)).build());
    }

    private static void assertRan(RunResult r) {
        assertThat(r.stdout()).as("stdout of %s (stderr: %s)", r, r.stderr()).contains("uid=");
    }

    private static void assertRefused(RunResult r) {
        assertThat(r.stdout()).as("stdout (stderr: %s)", r.stderr()).doesNotContain("uid=");
        assertThat(r.exitCode()).isNotZero();
    }

    @Test
    void should_declare_kernel_enforcement_only_with_the_setting() {
        assertThat(guarded.describe().commandAllowListEnforcement()).isEqualTo(CommandAllowListEnforcement.KERNEL);
        assertThat(open.describe().commandAllowListEnforcement()).isEqualTo(CommandAllowListEnforcement.TEXT);
    }

    @Test
    void should_run_the_allowed_programs() {
        for (SandboxEngine e : List.of(guarded, open)) {
            Workspace w = e == guarded ? gws : ows;
            RunResult ls = run(e, w, "ls", "work");
            assertThat(ls.exitCode()).as(ls.stderr()).isZero();
            assertThat(ls.stdout()).contains("note.txt");
            RunResult cp = run(e, w, "cp", "work/note.txt", "/tmp/note.txt");
            assertThat(cp.exitCode()).as(cp.stderr()).isZero();
            RunResult cat = run(e, w, "cat", "work/note.txt", "/etc/passwd");
            assertThat(cat.exitCode()).as(cat.stderr()).isZero();
            assertThat(cat.stdout()).contains("hello from the workspace").contains("root:");
            RunResult env = run(e, w, "env", "ls", "work");
            assertThat(env.exitCode()).as(env.stderr()).isZero();
            assertThat(env.stdout()).contains("note.txt");
            RunResult pipe = run(e, w, "sh", "-c", "cat work/note.txt | cat > work/piped.txt && ls work");
            assertThat(pipe.exitCode()).as(pipe.stderr()).isZero();
            assertThat(pipe.stdout()).contains("piped.txt");
        }
    }

    @Test
    void should_run_the_tools_policy_commands_under_the_kernel_allow_list() {
        // Policy runs start with sh -c and the words resolved to absolute paths: the engine lets sh execute.
        try (CodeExecution codeExec = CodeExecution.builder().engine(guarded).commandPolicy(POLICY).build()) {
            codeExec.workspace("tools").putFile("work/a.txt", "alpha\n");
            String piped = ToolCalls.call(codeExec, "tools", "workspace_exec",
                    "{\"command\": \"cat work/a.txt | cat && ls work\"}").resultText();
            assertThat(piped).startsWith("exit_code: 0").contains("alpha").contains("a.txt");
            String refused = ToolCalls.call(codeExec, "tools", "workspace_exec",
                    "{\"command\": \"id\"}").resultText();
            assertThat(refused).doesNotContain("uid=").contains("allow list");
        }
    }

    @Test
    void should_start_sessions_under_the_allow_list() {
        try (ProgramSession s = guarded.interactive().orElseThrow().startProgram(gws,
                RunProgramSpec.builder("cat").timeout(Duration.ofSeconds(120)).build())) {
            s.write("still-here", true);
            s.closeStdin();
            assertThat(outputUntilExit(s)).isEqualTo("still-here\n");
            assertThat(s.exitCode()).contains(0);
        }
        try (ProgramSession s = guarded.interactive().orElseThrow().startProgram(gws,
                RunProgramSpec.builder(DENIED).timeout(Duration.ofSeconds(120)).build())) {
            assertThat(outputUntilExit(s)).doesNotContain("uid=");
            assertThat(s.exitCode()).contains(126);
        }
    }

    /** Everything a session printed, once it ended (its own timeout ends a wedged one). */
    private static String outputUntilExit(ProgramSession s) {
        StringBuilder out = new StringBuilder();
        long offset = 0;
        ProgramPoll p;
        do {
            p = s.await(Duration.ofSeconds(120), offset, 1 << 16);
            out.append(p.output());
            offset = p.nextOffset();
        } while (p.running());
        return out.toString();
    }

    @Test
    void should_report_a_run_with_the_helpers_failure_report_as_a_setup_failure_never_as_a_result() {
        // The helper reports a ruleset it could not set up on stderr with exit code 125 (nothing else is left to it
        // once bubblewrap started it). A program that imitates the report only fails its own run; here sh does.
        String report = "echo '" + ExecAllowList.MARKER + "imitated' >&2; exit " + ExecAllowList.GUARD_FAILED;
        assertThatThrownBy(() -> run(guarded, gws, "sh", "-c", report))
                .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("imitated")
                .hasMessageContaining("Nothing ran");
        RunResult control = run(open, ows, "sh", "-c", report);
        assertThat(control.exitCode()).isEqualTo(ExecAllowList.GUARD_FAILED);
    }

    @Test
    void should_mount_every_writable_place_noexec() {
        // Only device nodes stay writable without noexec: a character device cannot hold a program.
        List<String> devices = List.of("/dev/full", "/dev/null", "/dev/random", "/dev/tty", "/dev/urandom",
                "/dev/zero");
        assertThat(writableExecutableMounts(guarded, gws)).containsExactlyInAnyOrderElementsOf(devices);
        // Without the setting: bubblewrap's tmpfs (/tmp, /var/tmp, /dev with /dev/shm) and the workspace.
        assertThat(writableExecutableMounts(open, ows)).contains("/tmp", "/var/tmp", ows.path(), "/dev");
    }

    /**
     * The mount points a run can reach that are writable and allow exec: from its mountinfo
     * ({@code ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ...}), in mount order, leaving out every mount that a later
     * mount at the same place or above it covers.
     */
    private static List<String> writableExecutableMounts(SandboxEngine engine, Workspace w) {
        RunResult r = run(engine, w, "cat", "/proc/self/mountinfo");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        List<String[]> mounts = r.stdout().lines().map(l -> l.split(" ")).toList();
        List<String> found = new java.util.ArrayList<>();
        for (int i = 0; i < mounts.size(); i++) {
            String point = mounts.get(i)[4];
            boolean covered = false;
            for (int j = i + 1; j < mounts.size(); j++) {
                String later = mounts.get(j)[4];
                covered |= point.equals(later) || later.equals("/") || point.startsWith(later + "/");
            }
            List<String> options = List.of(mounts.get(i)[5].split(","));
            if (!covered && options.contains("rw") && !options.contains("noexec")) {
                found.add(point);
            }
        }
        return found;
    }

    @Test
    void should_start_programs_with_the_signal_dispositions_of_a_run_without_the_setting() {
        // The helper is a Python program, which ignores SIGPIPE and SIGXFSZ; the program it starts must not.
        assertThat(sigIgn(run(guarded, gws, "cat", "/proc/self/status")))
                .isEqualTo(sigIgn(run(open, ows, "cat", "/proc/self/status")));
    }

    private static String sigIgn(RunResult status) {
        assertThat(status.exitCode()).as(status.stderr()).isZero();
        return status.stdout().lines().filter(l -> l.startsWith("SigIgn:")).findFirst().orElseThrow();
    }

    @Test
    void should_refuse_a_denied_program_run_directly() {
        assertRan(run(open, ows, DENIED));
        RunResult r = run(guarded, gws, DENIED);
        assertRefused(r);
        assertThat(r.exitCode()).isEqualTo(126);
        assertThat(r.stderr()).contains("Permission denied");
    }

    @Test
    void should_refuse_a_denied_program_run_by_the_dynamic_loader() {
        assertRan(run(open, ows, LOADER, DENIED));
        RunResult r = run(guarded, gws, LOADER, DENIED);
        assertRefused(r);
        // Landlock's READ_FILE: the loader cannot even open the program (it does not check EXECUTE on what it maps).
        assertThat(r.stderr()).contains("cannot open shared object file: Permission denied");
    }

    @Test
    void should_refuse_reading_a_denied_program_so_that_it_cannot_be_copied() {
        RunResult control = run(open, ows, "cp", DENIED, "work/id2");
        assertThat(control.exitCode()).as(control.stderr()).isZero();
        RunResult r = run(guarded, gws, "cp", DENIED, "work/id2");
        assertThat(r.exitCode()).isNotZero();
        assertThat(r.stderr()).contains("Permission denied");
    }

    @Test
    void should_refuse_a_copy_in_the_workspace_run_directly_or_by_the_loader() {
        assertRan(run(open, ows, "work/id"));
        assertRan(run(open, ows, LOADER, "work/id"));
        assertRefused(run(guarded, gws, "work/id"));
        RunResult loaded = run(guarded, gws, LOADER, "work/id");
        assertRefused(loaded);
        // The workspace is readable, so what stops the loader is the volume's noexec: no executable mapping.
        assertThat(loaded.stderr()).contains("failed to map segment");
    }

    @Test
    void should_refuse_a_copy_in_the_scratch_directories() {
        for (String dir : List.of("/tmp", "/var/tmp", "/dev/shm")) {
            String line = "cp work/id " + dir + "/id && " + dir + "/id";
            assertRan(run(open, ows, "sh", "-c", line));
            assertRan(run(open, ows, "sh", "-c", "cp work/id " + dir + "/id && " + LOADER + " " + dir + "/id"));
            RunResult r = run(guarded, gws, "sh", "-c", line);
            assertRefused(r);
            assertThat(r.stderr()).as(dir).contains("Permission denied");
            RunResult loaded = run(guarded, gws, "sh", "-c", "cp work/id " + dir + "/id && " + LOADER + " " + dir
                    + "/id");
            assertRefused(loaded);
            assertThat(loaded.stderr()).as(dir).contains("failed to map segment");
        }
        // /dev itself is read-only: nothing can be written beside the device nodes.
        RunResult dev = run(guarded, gws, "cp", "work/id", "/dev/id");
        assertThat(dev.exitCode()).isNotZero();
    }

    @Test
    void should_refuse_a_denied_program_started_by_an_allowed_wrapper_or_the_shell() {
        assertRan(run(open, ows, "env", DENIED));
        assertRan(run(open, ows, "sh", "-c", DENIED));
        RunResult env = run(guarded, gws, "env", DENIED);
        assertRefused(env);
        assertThat(env.exitCode()).isEqualTo(126);
        assertRefused(run(guarded, gws, "sh", "-c", DENIED));
        assertRefused(run(guarded, gws, "env", LOADER, DENIED));
    }

    @Test
    void should_refuse_a_program_kept_in_a_library_directory_run_by_the_loader() {
        // A JDK under /usr/lib/jvm is a general interpreter in a directory that holds libraries too.
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Requirements.require(java.startsWith("/usr/lib/") && Files.isExecutable(java), "a JDK under /usr/lib");
        RunResult control = run(open, ows, LOADER, java.toString(), "-version");
        assertThat(control.exitCode()).as(control.stderr()).isZero();
        assertThat(control.stderr()).contains("version");
        RunResult r = run(guarded, gws, LOADER, java.toString(), "-version");
        assertThat(r.exitCode()).isNotZero();
        assertThat(r.stderr()).doesNotContain("version \"");
        assertThat(r.stderr()).contains("cannot open shared object file: Permission denied");
    }

    @Test
    void should_refuse_what_cannot_be_enforced_at_build() throws IOException {
        assertThatThrownBy(() -> SandboxEngine.builder().rootDir(tmp.resolve("noquota")).diskQuota(0)
                .enforceAllowList(POLICY).build())
                .isInstanceOf(UnsupportedCapabilityException.class).hasMessageContaining("noexec");
        assertThatThrownBy(() -> SandboxEngine.builder().rootDir(tmp.resolve("nolist"))
                .enforceAllowList(CommandPolicy.builder().deny("curl").build()).build())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("allow list");
        Path grant = Files.createDirectories(tmp.resolve("grant"));
        assertThatThrownBy(() -> SandboxEngine.builder().rootDir(tmp.resolve("write"))
                .profile(PermissionProfile.workspaceWrite().withWritePaths(grant.toString()))
                .enforceAllowList(POLICY).build())
                .isInstanceOf(UnsupportedCapabilityException.class).hasMessageContaining("write grant");
    }

    @Test
    void should_refuse_additional_path_grants_and_directories_that_are_not_its_workspaces() throws IOException {
        assertThatThrownBy(() -> guarded.runProgram(gws, RunProgramSpec.builder("ls").build(),
                AdditionalPermissions.read(tmp.toString())))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("allow list");
        // A host directory is no noexec volume: a program copied into it could run.
        Path dir = Files.createDirectories(tmp.resolve("host-dir"));
        SandboxTesting.claimForSandbox(dir);
        assertThatThrownBy(() -> guarded.runInDirectory(dir, RunProgramSpec.builder("ls").build(),
                AdditionalPermissions.NONE))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining("noexec");
        RunResult control = open.runInDirectory(dir, RunProgramSpec.builder("ls").build(), AdditionalPermissions.NONE);
        assertThat(control.exitCode()).as(control.stderr()).isZero();
    }
}
