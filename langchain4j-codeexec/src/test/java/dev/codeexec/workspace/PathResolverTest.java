package dev.codeexec.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.WorkspaceGoneException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class PathResolverTest {

    @TempDir
    Path tmp;

    Path root;
    Path outside;
    PathResolver resolver;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createDirectory(tmp.resolve("ws"));
        outside = Files.createDirectory(tmp.resolve("outside"));
        Files.writeString(outside.resolve("secret.txt"), "secret");
        WorkspaceLayout.create(root);
        resolver = new PathResolver(root);
    }

    // ---- normalize ----

    @ParameterizedTest
    @CsvSource({
            "a//b/./c, a/b/c",
            "./x, x",
            "x/, x",
            "'', .",
            "., .",
            "'  out/r.md  ', out/r.md",
            "$OUTPUT_DIR/x, out/x",
            "${OUTPUT_DIR}/x, out/x",
            "${WORK_DIR}, work",
            "$WORK_DIR/a/../, PATH_ESCAPE",
            "$SKILLS_DIR/s, skills/s",
            "$WORKSPACE_DIR/out, out",
            "$HOME/x, $HOME/x",
            "a$OUTPUT_DIR, a$OUTPUT_DIR",
            "/etc/passwd, PATH_ESCAPE",
            "~/x, PATH_ESCAPE",
            "~, PATH_ESCAPE",
            "../x, PATH_ESCAPE",
            "a/../../x, PATH_ESCAPE",
            "a/.., PATH_ESCAPE",
            "a\\b, INVALID",
            "..\\x, INVALID",
    })
    void should_normalize_or_refuse_when_given_path_table(String in, String expected) {
        if (expected.equals("PATH_ESCAPE")) {
            assertThatThrownBy(() -> PathResolver.normalize(in)).isInstanceOf(PathEscapeException.class);
        } else if (expected.equals("INVALID")) {
            assertThatThrownBy(() -> PathResolver.normalize(in)).isInstanceOf(InvalidSpecException.class)
                    .isNotInstanceOf(PathEscapeException.class);
        } else {
            assertThat(PathResolver.normalize(in)).isEqualTo(expected);
        }
    }

    @Test
    void should_refuse_when_path_has_nul_or_is_null() {
        assertThatThrownBy(() -> PathResolver.normalize("a\0b")).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("NUL");
        assertThatThrownBy(() -> PathResolver.normalize(null)).isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_not_leak_host_root_when_refusing() {
        assertThatThrownBy(() -> resolver.resolve("../x")).hasMessageNotContaining(tmp.toString());
    }

    // ---- resolve ----

    @Test
    void should_resolve_missing_path_under_root_when_nothing_exists() {
        assertThat(resolver.resolve("work/new/file.txt")).isEqualTo(resolver.root().resolve("work/new/file.txt"));
        assertThat(resolver.resolve(".")).isEqualTo(resolver.root());
    }

    @Test
    void should_follow_link_when_it_stays_inside_workspace() throws IOException {
        Files.writeString(root.resolve("work/data.csv"), "a,b");
        Files.createSymbolicLink(root.resolve("out/link.csv"), Path.of("..", "work", "data.csv"));
        Files.createSymbolicLink(root.resolve("w"), root.resolve("work"));

        assertThat(resolver.resolve("out/link.csv")).isEqualTo(resolver.root().resolve("work/data.csv"));
        assertThat(resolver.resolve("w/data.csv")).isEqualTo(resolver.root().resolve("work/data.csv"));
        assertThat(resolver.resolveExisting("w/data.csv")).exists();
    }

    @Test
    void should_refuse_link_when_it_leads_outside_workspace() throws IOException {
        Files.createSymbolicLink(root.resolve("out/secret"), outside.resolve("secret.txt"));
        Files.createSymbolicLink(root.resolve("work/up"), outside);

        assertThatThrownBy(() -> resolver.resolve("out/secret")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> resolver.resolve("work/up/secret.txt")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> resolver.resolve("work/up/new.txt")).isInstanceOf(PathEscapeException.class);
    }

    @Test
    void should_refuse_link_when_it_is_dangling() throws IOException {
        Files.createSymbolicLink(root.resolve("out/dangling"), root.resolve("work/missing"));

        assertThatThrownBy(() -> resolver.resolve("out/dangling")).isInstanceOf(PathEscapeException.class)
                .hasMessageContaining("does not resolve");
    }

    @Test
    void should_refuse_link_to_root_parent_when_chained_through_inside_links() throws IOException {
        // a -> b (inside), b -> .. (outside): following a must not end outside.
        Files.createSymbolicLink(root.resolve("b"), tmp);
        Files.createSymbolicLink(root.resolve("a"), root.resolve("b"));

        assertThatThrownBy(() -> resolver.resolve("a/outside/secret.txt")).isInstanceOf(PathEscapeException.class);
    }

    @Test
    void should_report_missing_when_existing_path_is_required() {
        assertThatThrownBy(() -> resolver.resolveExisting("work/none.txt")).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("work/none.txt").hasMessageContaining("does not exist");
    }

    @Test
    void should_report_workspace_gone_when_root_is_missing() {
        assertThatThrownBy(() -> new PathResolver(tmp.resolve("nope"))).isInstanceOf(WorkspaceGoneException.class);
    }

    // ---- writes ----

    @Test
    void should_create_parents_when_resolving_for_write() {
        Path target = resolver.resolveForWrite("out/a/b/c.txt");

        assertThat(target).isEqualTo(resolver.root().resolve("out/a/b/c.txt"));
        assertThat(target.getParent()).isDirectory();
        assertThat(target).doesNotExist();
    }

    @Test
    void should_refuse_write_when_link_is_planted_as_parent_directory() throws IOException {
        Files.createSymbolicLink(root.resolve("out/dir"), outside);

        assertThatThrownBy(() -> resolver.resolveForWrite("out/dir/x.txt")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> resolver.resolveForWrite("out/dir/sub/x.txt"))
                .isInstanceOf(PathEscapeException.class);
        assertThat(outside.resolve("sub")).doesNotExist();
    }

    @Test
    void should_write_through_parent_link_when_it_stays_inside() throws IOException {
        Files.createSymbolicLink(root.resolve("out/dir"), root.resolve("work"));

        assertThat(resolver.resolveForWrite("out/dir/x.txt")).isEqualTo(resolver.root().resolve("work/x.txt"));
    }

    @Test
    void should_refuse_write_when_target_is_root_or_directory_or_parent_is_file() throws IOException {
        Files.writeString(root.resolve("work/file"), "x");

        assertThatThrownBy(() -> resolver.resolveForWrite(".")).isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> resolver.resolveForWrite("out")).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("is a directory");
        assertThatThrownBy(() -> resolver.resolveForWrite("work/file/x")).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("not a directory");
    }

    @Test
    void should_create_directory_and_return_real_path_when_ensuring() throws IOException {
        Path dir = resolver.ensureDirectory("work/x/y");

        assertThat(dir).isDirectory().isEqualTo(resolver.root().resolve("work/x/y"));
        assertThat(resolver.ensureDirectory("work/x/y")).isEqualTo(dir);
        assertThat(resolver.ensureDirectory(".")).isEqualTo(resolver.root());

        Files.createSymbolicLink(root.resolve("work/l"), outside);
        assertThatThrownBy(() -> resolver.ensureDirectory("work/l/z")).isInstanceOf(PathEscapeException.class);
        assertThat(outside.resolve("z")).doesNotExist();
    }

    @Test
    void should_relativize_host_paths_when_inside_workspace() {
        assertThat(resolver.relativize(resolver.root())).isEqualTo(".");
        assertThat(resolver.relativize(resolver.root().resolve("out/a/b.txt"))).isEqualTo("out/a/b.txt");
        assertThat(resolver.contains(resolver.root().resolve("out"))).isTrue();
        assertThat(resolver.contains(outside)).isFalse();
    }

    @Test
    void should_catch_directory_swapped_for_link_when_checked_again() throws IOException {
        Path first = resolver.resolveForWrite("out/d/x.txt");
        assertThat(first.getParent()).isDirectory();

        // A program replaces the checked directory by a link out of the workspace between two calls.
        Path d = root.resolve("out/d");
        Files.delete(d);
        Files.createSymbolicLink(d, outside);

        assertThatThrownBy(() -> resolver.resolveForWrite("out/d/x.txt")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> resolver.resolve("out/d/secret.txt")).isInstanceOf(PathEscapeException.class);
        assertThat(Files.isSymbolicLink(d)).isTrue();
        assertThat(outside.resolve("x.txt")).doesNotExist();
    }

    @ParameterizedTest
    @ValueSource(strings = {"work", "out", "work/inputs", "runs", "skills", "home", "tmp"})
    void should_have_layout_directory_when_workspace_created(String dir) {
        assertThat(root.resolve(dir)).isDirectory();
        assertThat(Files.isSymbolicLink(root.resolve(dir))).isFalse();
        assertThat(Files.isDirectory(resolver.resolveExisting(dir), LinkOption.NOFOLLOW_LINKS)).isTrue();
    }
}
