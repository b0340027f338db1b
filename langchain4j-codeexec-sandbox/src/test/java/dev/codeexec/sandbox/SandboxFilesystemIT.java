package dev.codeexec.sandbox;

import static dev.codeexec.sandbox.SandboxTesting.python;
import static dev.codeexec.sandbox.SandboxTesting.sh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.codeexec.artifact.FileSystemArtifactService;
import dev.codeexec.engine.InputSpec;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.StageOptions;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Filesystem attacks against a real bubblewrap sandbox, each paired with a positive control that the same profile
 * can do what it should.
 */
class SandboxFilesystemIT extends AbstractSandboxIT {

    /** Host files the sandbox would show but for its rules, reachable by the sandbox user wherever we run. */
    @TempDir(factory = HostTempDirs.class)
    Path host;

    private final List<Path> planted = new ArrayList<>();
    private final String secret = "s3cr3t-" + UUID.randomUUID();

    @AfterEach
    void removePlanted() throws IOException {
        for (Path p : planted) {
            deleteTree(p);
        }
    }

    @Test
    void should_hide_planted_host_secret_files_when_default_profile() throws IOException {
        assumeTrue(SandboxTesting.isRoot(), "planting files in /root and /home needs root");
        Path rootSecret = plant(Path.of("/root", ".codeexec-it-" + UUID.randomUUID()), secret);
        Path home = Path.of("/home", "codeexec-it-" + UUID.randomUUID());
        planted.add(home);
        Path sshKey = plant(home.resolve(".ssh/id_ed25519"), secret);
        Path aws = plant(home.resolve(".aws/credentials"), secret);
        Path visible = plant(home.resolve("notes.txt"), "public-notes");

        RunResult r = python(engine, ws, SandboxTesting.TRY
                + "for p in " + pyList(rootSecret, sshKey, aws, Path.of("/etc/shadow"), Path.of("/etc/gshadow")) + ":\n"
                + "    print(p, attempt(lambda: open(p).read()))\n"
                + "print('notes', open('" + visible + "').read())\n"
                + "print('libs', os.path.exists('/usr/lib/os-release') or os.path.exists('/etc/os-release'))\n");

        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).doesNotContain(secret);
        // Hidden directories are empty and not even traversable; hidden files read as nothing.
        for (Path p : List.of(rootSecret, sshKey, aws, Path.of("/etc/shadow"), Path.of("/etc/gshadow"))) {
            assertThat(r.stdout()).containsPattern(java.util.regex.Pattern.quote(p.toString()) + " E(NOENT|ACCES)");
        }
        // Positive control: the rest of the host stays readable, system libraries included.
        assertThat(r.stdout()).contains("notes public-notes").contains("libs True");
    }

    @Test
    void should_hide_extra_no_access_path_and_show_its_sibling() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("hostdata"));
        Path hidden = plant(dir.resolve("secret.txt"), secret);
        plant(dir.resolve("public.txt"), "public");
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root2"))
                .profile(PermissionProfile.workspaceWrite().withReadPaths(dir.toString())
                        .withNoAccessPaths(hidden.toString())).build()) {
            Workspace w = e.manager().createWorkspace("x", WorkspacePolicy.DEFAULT);
            RunResult r = python(e, w, SandboxTesting.TRY
                    + "print('secret', attempt(lambda: print(open('" + hidden + "').read())))\n"
                    + "print('public', open('" + dir.resolve("public.txt") + "').read())\n");
            assertThat(r.stdout()).doesNotContain(secret).containsPattern("secret E(ACCES|NOENT|PERM)")
                    .contains("public public");
        }
    }

    @Test
    void should_refuse_writes_outside_workspace_directly_and_through_symlink() throws IOException {
        String scratchName = "codeexec-it-" + UUID.randomUUID();
        Path hostDir = Files.createDirectories(tmp.resolve("readable"));
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root2"))
                .profile(PermissionProfile.workspaceWrite().withReadPaths(hostDir.toString())).build()) {
            Workspace w = e.manager().createWorkspace("x", WorkspacePolicy.DEFAULT);
            RunResult r = python(e, w, SandboxTesting.TRY
                    + "os.symlink('" + hostDir + "', 'link')\n"
                    + "os.symlink('/etc', 'etclink')\n"
                    + "print('direct', attempt(lambda: open('" + hostDir.resolve("direct.txt") + "', 'w')))\n"
                    + "print('via-link', attempt(lambda: open('link/vialink.txt', 'w')))\n"
                    + "print('etc', attempt(lambda: open('etclink/codeexec-it', 'w')))\n"
                    + "print('usr', attempt(lambda: open('/usr/codeexec-it', 'w')))\n"
                    + "print('root', attempt(lambda: open('/codeexec-it', 'w')))\n"
                    + "open(os.environ['OUTPUT_DIR'] + '/ok.txt', 'w').write('written')\n"
                    + "print('tmp', attempt(lambda: open('/tmp/" + scratchName + "', 'w').write('x')))\n");
            assertThat(r.exitCode()).as(r.stderr()).isZero();
            assertThat(r.stdout()).contains("direct EROFS").contains("via-link EROFS").contains("etc EROFS")
                    .contains("usr EROFS").contains("root EROFS");
            assertThat(Files.exists(hostDir.resolve("direct.txt"))).isFalse();
            assertThat(Files.exists(hostDir.resolve("vialink.txt"))).isFalse();
            assertThat(Files.exists(Path.of("/etc/codeexec-it"))).isFalse();
            // Positive control: out/ is writable and the host sees the file; /tmp is a private scratch space.
            assertThat(e.fs().readFile(w, "out/ok.txt", 0, 100).contentAsString()).isEqualTo("written");
            assertThat(r.stdout()).contains("tmp ok");
            assertThat(Files.exists(Path.of("/tmp", scratchName))).isFalse();
        }
    }

    @Test
    void should_not_show_other_workspaces_by_absolute_path() {
        Workspace other = engine.manager().createWorkspace("victim", WorkspacePolicy.DEFAULT);
        engine.fs().putFiles(other, List.of(PutFile.of("out/secret.txt", secret)));
        engine.fs().putFiles(ws, List.of(PutFile.of("out/mine.txt", "mine")));
        String otherPath = other.path() + "/out/secret.txt";

        RunResult r = python(engine, ws, SandboxTesting.TRY
                + "print('other', attempt(lambda: open('" + otherPath + "').read()))\n"
                + "print('listing', sorted(os.listdir(os.path.dirname(os.environ['WORKSPACE_DIR']))))\n"
                + "print('root', attempt(lambda: os.listdir('" + Path.of(ws.path()).getParent().getParent() + "')))\n"
                + "print('mine', open(os.environ['WORKSPACE_DIR'] + '/out/mine.txt').read())\n");

        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).doesNotContain(secret).contains("other ENOENT")
                .contains("listing ['" + ws.id() + "']");
        // Positive control: the run's own workspace is reachable by absolute path.
        assertThat(r.stdout()).contains("mine mine");
    }

    @Test
    void should_keep_git_metadata_read_only_inside_writable_workspace() {
        engine.fs().putFiles(ws, List.of(PutFile.of(".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n"),
                PutFile.of(".git/HEAD", "ref: refs/heads/main\n")));
        RunResult r = python(engine, ws, SandboxTesting.TRY
                + "root = os.environ['WORKSPACE_DIR']\n"
                + "print('hook', attempt(lambda: open(root + '/.git/hooks/pre-commit', 'w').write('curl evil')))\n"
                + "print('new-hook', attempt(lambda: open(root + '/.git/hooks/post-checkout', 'w')))\n"
                + "print('rename', attempt(lambda: os.rename(root + '/.git', root + '/git-moved')))\n"
                + "print('chmod', attempt(lambda: os.chmod(root + '/.git/hooks/pre-commit', 0o777)))\n"
                + "print('read', open(root + '/.git/HEAD').read().strip())\n"
                + "open(root + '/out/code.py', 'w').write('print(1)')\n"
                + "print('work ok')\n");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("hook EROFS").contains("new-hook EROFS").contains("chmod EROFS")
                .containsPattern("rename E(BUSY|ROFS|XDEV|PERM|ACCES)");
        assertThat(engine.fs().readFile(ws, ".git/hooks/pre-commit", 0, 100).contentAsString())
                .isEqualTo("#!/bin/sh\nexit 0\n");
        // Positive control: git metadata is readable and the rest of the workspace writable.
        assertThat(r.stdout()).contains("read ref: refs/heads/main").contains("work ok");
    }

    @Test
    void should_refuse_to_run_when_protected_metadata_was_replaced_by_a_link() {
        // By default no program can even create '.git' at the workspace root.
        RunResult refused = sh(engine, ws, "ln -s /root \"$WORKSPACE_DIR/.git\" && echo planted");
        assertThat(refused.stdout()).doesNotContain("planted");
        // Where the profile lets programs create it, a link planted there is refused by the next run.
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root2"))
                .profile(PermissionProfile.workspaceWrite().withProtectedMetadataCreation()).build()) {
            Workspace w = e.manager().createWorkspace("p", WorkspacePolicy.DEFAULT);
            RunResult planted = sh(e, w, "ln -s /root \"$WORKSPACE_DIR/.git\" && echo planted");
            assertThat(planted.stdout()).contains("planted");
            assertThatThrownBy(() -> sh(e, w, "true")).isInstanceOf(PolicyViolationException.class)
                    .hasMessageContaining(".git");
            // Positive control: after the application removes the link, runs work again.
            e.fs().delete(w, ".git");
            assertThat(sh(e, w, "echo fine").stdout()).isEqualTo("fine\n");
        }
    }

    @Test
    void should_hide_glob_matches_from_program_and_file_operations() throws IOException {
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root2"))
                .profile(PermissionProfile.workspaceWrite().withNoAccessGlobs("**/.env", "work/private/**")).build()) {
            Workspace w = e.manager().createWorkspace("g", WorkspacePolicy.DEFAULT);
            // The files got there outside the file API (say, a repository a program cloned): the API refuses them.
            Path root = Path.of(w.path());
            for (String f : List.of("work/.env", "work/sub/.env", "work/private/key.txt")) {
                Files.createDirectories(root.resolve(f).getParent());
                Files.writeString(root.resolve(f), "TOKEN=" + secret);
            }
            e.fs().putFiles(w, List.of(PutFile.of("work/app.py", "print('app')")));
            assertThatThrownBy(() -> e.fs().putFiles(w, List.of(PutFile.of("work/new/.env", "x"))))
                    .isInstanceOf(PolicyViolationException.class);
            RunResult r = python(e, w, SandboxTesting.TRY
                    + "for p in ['.env', 'sub/.env', 'private/key.txt']:\n"
                    + "    print(p, attempt(lambda: print(open(p).read())))\n"
                    + "print('app', open('app.py').read())\n");
            assertThat(r.stdout()).doesNotContain(secret).containsPattern("\\.env E(ACCES|NOENT)")
                    .containsPattern("sub/\\.env E(ACCES|NOENT)").containsPattern("private/key.txt E(ACCES|NOENT)");
            assertThatThrownBy(() -> e.fs().readFile(w, "work/sub/.env", 0, 100))
                    .isInstanceOf(PolicyViolationException.class);
            assertThat(e.fs().collect(w, List.of("work/**"))).extracting(f -> f.name())
                    .doesNotContain("work/.env", "work/sub/.env", "work/private/key.txt");
            // Positive control: everything else works.
            assertThat(r.stdout()).contains("app print('app')");
            assertThat(e.fs().readFile(w, "work/app.py", 0, 100).contentAsString()).isEqualTo("print('app')");
        }
    }

    @Test
    void should_not_copy_or_list_hidden_files_through_the_file_operations() throws IOException {
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root3"))
                .profile(PermissionProfile.workspaceWrite().withNoAccessGlobs("work/private/**")).build()) {
            Workspace w = e.manager().createWorkspace("c", WorkspacePolicy.DEFAULT);
            Path root = Path.of(w.path());
            Files.createDirectories(root.resolve("work/private"));
            Files.writeString(root.resolve("work/private/key.txt"), "TOKEN=" + secret);
            e.fs().putFiles(w, List.of(PutFile.of("work/public/data.csv", "a,b\n")));

            // Attack: a copy of the parent would carry the hidden file to a readable place.
            assertThatThrownBy(() -> e.fs().stageInputs(w, List.of(InputSpec.of("workspace://work", "out/copy"))))
                    .isInstanceOf(PolicyViolationException.class).hasMessageContaining("hide")
                    .hasMessageNotContaining("key.txt");
            assertThat(Files.exists(root.resolve("out/copy"), java.nio.file.LinkOption.NOFOLLOW_LINKS)).isFalse();
            // Attack: listing the hidden file by name would tell its size.
            assertThatThrownBy(() -> e.fs().list(w, "work/private/key.txt"))
                    .isInstanceOf(PolicyViolationException.class);

            // Positive control: a readable tree is copied and listed.
            e.fs().stageInputs(w, List.of(InputSpec.of("workspace://work/public", "out/copy")));
            assertThat(e.fs().readFile(w, "out/copy/data.csv", 0, 100).contentAsString()).isEqualTo("a,b\n");
            assertThat(e.fs().list(w, "work/public/data.csv")).extracting(f -> f.path())
                    .containsExactly("work/public/data.csv");
        }
    }

    @Test
    void should_keep_workspace_read_only_when_read_only_profile() {
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root2"))
                .profile(PermissionProfile.readOnly()).build()) {
            Workspace w = e.manager().createWorkspace("ro", WorkspacePolicy.DEFAULT);
            e.fs().putFiles(w, List.of(PutFile.of("work/data.txt", "data")));
            RunResult r = python(e, w, SandboxTesting.TRY
                    + "print('out', attempt(lambda: open(os.environ['OUTPUT_DIR'] + '/x', 'w')))\n"
                    + "print('read', open('data.txt').read())\n"
                    + "print('tmp', attempt(lambda: open('/tmp/x', 'w').write('x')))\n");
            assertThat(r.stdout()).contains("out EROFS").contains("read data").contains("tmp ok");
        }
    }

    @Test
    void should_mount_read_only_stage_so_owner_cannot_chmod_it_back() throws IOException {
        Path skill = Files.createDirectories(tmp.resolve("inputs/skill"));
        Files.writeString(skill.resolve("SKILL.md"), "instructions");
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root2"))
                .inputRoots(List.of(tmp.resolve("inputs"))).build()) {
            Workspace w = e.manager().createWorkspace("s", WorkspacePolicy.DEFAULT);
            e.fs().stageDirectory(w, skill, "skills/demo", new StageOptions(true, false));
            RunResult r = python(e, w, SandboxTesting.TRY
                    + "p = os.environ['SKILLS_DIR'] + '/demo/SKILL.md'\n"
                    + "print('chmod', attempt(lambda: os.chmod(p, 0o666)))\n"
                    + "print('write', attempt(lambda: open(p, 'w')))\n"
                    + "print('read', open(p).read())\n");
            assertThat(r.stdout()).contains("chmod EROFS").contains("write E").contains("read instructions");
            // Control: staged again as writable, the same path is the program's to change.
            e.fs().stageDirectory(w, skill, "skills/demo", new StageOptions(false, false));
            RunResult again = python(e, w, SandboxTesting.TRY
                    + "p = os.environ['SKILLS_DIR'] + '/demo/SKILL.md'\n"
                    + "print('write', attempt(lambda: open(p, 'w').write('changed')))\n");
            assertThat(again.stdout()).contains("write ok");
        }
    }

    @Test
    void should_scope_additional_grants_to_one_run() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("granted"));
        Files.writeString(dir.resolve("in.txt"), "granted-content");
        SandboxTesting.claimForSandbox(dir);
        String code = SandboxTesting.TRY + "print('r', attempt(lambda: print(open('" + dir.resolve("in.txt")
                + "').read())))\nprint('w', attempt(lambda: open('" + dir.resolve("out.txt") + "', 'w').write('x')))\n";
        RunResult withGrant = python(engine, ws, code, AdditionalPermissions.write(dir.toString()));
        assertThat(withGrant.stdout()).contains("granted-content").contains("w ok");
        RunResult without = python(engine, ws, code);
        assertThat(without.stdout()).doesNotContain("granted-content");
    }

    @Test
    void should_hide_the_file_artifact_store_from_programs() throws IOException {
        // The store lies outside /tmp (which every sandbox replaces), where the read-only host would show it, and
        // where the sandbox user could reach it but for the rule that hides it.
        Path store = host.resolve("artifacts");
        FileSystemArtifactService artifacts = FileSystemArtifactService.at(store);
        artifacts.save("alice-salary.csv", ("alice," + secret + "\n").getBytes(StandardCharsets.UTF_8), "text/csv");
        try (SandboxEngine e = SandboxEngine.builder().rootDir(tmp.resolve("root2")).artifactService(artifacts)
                .build()) {
            Workspace bob = e.manager().createWorkspace("bob", WorkspacePolicy.DEFAULT);
            RunResult r = sh(e, bob, "find '" + artifacts.root() + "' -type f 2>&1; cat '" + artifacts.root()
                    + "/alice-salary.csv/@versions/v1.bin' 2>&1; echo end");
            assertThat(r.stdout()).doesNotContain(secret).doesNotContain("v1.bin\n").endsWith("end\n");
            assertThat(e.profile().rules()).contains(new PermissionProfile.PathRule(artifacts.root().toString(),
                    FileAccess.NONE));
            // Positive control: the artifact reaches a program through the engine's file operations.
            e.fs().stageInputs(bob, List.of(InputSpec.of("artifact://alice-salary.csv", "work/in.csv")));
            assertThat(sh(e, bob, "cat in.csv").stdout()).contains(secret);
        }
        // A profile that grants the store's root contradicts hiding it: refused before anything runs.
        assertThatThrownBy(() -> SandboxEngine.builder().rootDir(tmp.resolve("root3")).artifactService(artifacts)
                .profile(PermissionProfile.workspaceWrite().withReadPaths(artifacts.root().toString())).build())
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("artifact store");
    }

    private Path plant(Path file, String content) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, content, StandardCharsets.UTF_8);
        if (!file.startsWith(tmp)) {
            planted.add(file);
        }
        return file;
    }

    private static String pyList(Path... paths) {
        StringBuilder b = new StringBuilder("[");
        for (Path p : paths) {
            b.append("'").append(p).append("',");
        }
        return b.append("]").toString();
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path x : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(x);
            }
        }
    }
}
