package dev.codeexec.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code putFiles} checks its targets in the sandbox, in the helper that moves the files into place: a parent that
 * goes through a link out of the workspace (or one that does not resolve) is refused and nothing is written there;
 * a parent link inside the workspace is followed (the positive control); a target that is a directory or a parent
 * that is a file is refused; one refused path in a batch writes none of it; missing parents are created as the
 * workspace user.
 */
class E2bPutFilesIT {

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.host("e2b-put");
    private static E2bEngine engine;
    private static Workspace ws;

    @BeforeAll
    static void start() {
        engine = FAKE.closing(FAKE.engine().build());
        ws = engine.manager().createWorkspace("put", WorkspacePolicy.DEFAULT);
        RunResult r = sh("mkdir -p work/sub work/isdir && d=$(TMPDIR=/tmp mktemp -d) && echo \"$d\" > work/outside-dir"
                + " && ln -s \"$d\" work/escape && ln -s sub work/inside && echo x > work/file"
                + " && ln -s work/nowhere dangling");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
    }

    private static RunResult sh(String script) {
        return engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c", script).build());
    }

    @Test
    void should_refuse_a_parent_link_that_leaves_the_workspace_and_write_nothing_there() {
        assertThatThrownBy(() -> engine.fs().putFiles(ws, List.of(PutFile.of("work/escape/planted.txt", "x"))))
                .isInstanceOf(PathEscapeException.class).hasMessageContaining("work/escape/planted.txt");
        assertThatThrownBy(() -> engine.fs().putFiles(ws, List.of(PutFile.of("work/escape/deeper/p.txt", "x"))))
                .isInstanceOf(PathEscapeException.class);

        RunResult outside = sh("ls -A \"$(cat work/outside-dir)\"");
        assertThat(outside.exitCode()).isZero();
        assertThat(outside.stdout()).as("nothing was written outside the workspace").isEmpty();
    }

    @Test
    void should_refuse_a_parent_link_that_does_not_resolve() {
        assertThatThrownBy(() -> engine.fs().putFiles(ws, List.of(PutFile.of("dangling/x.txt", "x"))))
                .isInstanceOf(PathEscapeException.class);
    }

    @Test
    void should_follow_a_parent_link_inside_the_workspace() {
        engine.fs().putFiles(ws, List.of(PutFile.of("work/inside/via-link.txt", "through")));

        assertThat(sh("cat work/sub/via-link.txt").stdout()).isEqualTo("through");
    }

    @Test
    void should_refuse_a_directory_target_and_a_file_parent_and_write_nothing_of_the_batch() {
        assertThatThrownBy(() -> engine.fs().putFiles(ws, List.of(PutFile.of("work/isdir", "x"))))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("'work/isdir' is a directory");
        assertThatThrownBy(() -> engine.fs().putFiles(ws, List.of(PutFile.of("work/batch-ok.txt", "ok"),
                PutFile.of("work/file/below.txt", "x")))).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("work/file/below.txt");

        assertThat(engine.fs().stat(ws, "work/batch-ok.txt")).as("a refused batch writes nothing").isEmpty();
        assertThat(sh("cat work/file").stdout()).isEqualTo("x\n");
    }

    @Test
    void should_create_missing_parents_owned_by_the_workspace_user() {
        engine.fs().putFiles(ws, List.of(PutFile.of("work/n1/n2/deep.txt", "deep"), PutFile.of("out/n3/o.txt", "o")));

        RunResult r = sh("cat work/n1/n2/deep.txt out/n3/o.txt; echo; stat -c '%u' work/n1 work/n1/n2 out/n3"
                + " work/n1/n2/deep.txt; id -u");
        String[] lines = r.stdout().split("\n");
        assertThat(lines[0]).isEqualTo("deepo");
        String uid = lines[lines.length - 1];
        assertThat(List.of(lines).subList(1, 5)).as("owned by the workspace user").containsOnly(uid);
    }
}
