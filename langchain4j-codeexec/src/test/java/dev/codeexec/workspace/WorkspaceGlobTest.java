package dev.codeexec.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class WorkspaceGlobTest {

    @ParameterizedTest
    @CsvSource({
            "out/**, out",
            "out/*.csv, out",
            "out/a/*/b.txt, out/a",
            "**/*.csv, .",
            "*.txt, .",
            "out/report.md, out/report.md",
            "./out/**, out",
            "$OUTPUT_DIR/**, out",
    })
    void should_walk_from_static_prefix_when_compiling(String glob, String base) {
        assertThat(WorkspaceGlob.compile(glob).base()).isEqualTo(base);
    }

    @Test
    void should_cross_directories_only_when_glob_has_double_star() {
        WorkspaceGlob deep = WorkspaceGlob.compile("out/**");
        WorkspaceGlob flat = WorkspaceGlob.compile("out/*");
        WorkspaceGlob anyCsv = WorkspaceGlob.compile("**/*.csv");

        assertThat(deep.matches("out/a.txt")).isTrue();
        assertThat(deep.matches("out/x/y/z.txt")).isTrue();
        assertThat(deep.matches("work/a.txt")).isFalse();
        assertThat(flat.matches("out/a.txt")).isTrue();
        assertThat(flat.matches("out/x/a.txt")).isFalse();
        assertThat(anyCsv.matches("data.csv")).isTrue();
        assertThat(anyCsv.matches("work/in/data.csv")).isTrue();
        assertThat(anyCsv.matches("work/data.txt")).isFalse();
    }

    @Test
    void should_match_braces_and_classes_when_glob_uses_them() {
        WorkspaceGlob g = WorkspaceGlob.compile("out/*.{png,jpg}");

        assertThat(Map.of("out/a.png", g.matches("out/a.png"), "out/b.jpg", g.matches("out/b.jpg"), "out/c.gif",
                g.matches("out/c.gif"))).containsExactlyInAnyOrderEntriesOf(Map.of("out/a.png", true, "out/b.jpg",
                true, "out/c.gif", false));
        assertThat(WorkspaceGlob.compile("out/f[0-9].txt").matches("out/f7.txt")).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"/etc/**", "~/x", "../**", "out/../../x", "$WORKSPACE_DIR/../x"})
    void should_refuse_glob_when_it_escapes(String glob) {
        assertThatThrownBy(() -> WorkspaceGlob.compile(glob)).isInstanceOf(PathEscapeException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "  ", "out\\*", "out/[a"})
    void should_refuse_glob_when_blank_or_malformed(String glob) {
        assertThatThrownBy(() -> WorkspaceGlob.compile(glob)).isInstanceOf(InvalidSpecException.class)
                .isNotInstanceOf(PathEscapeException.class);
    }

    @Test
    void should_detect_glob_syntax_when_text_has_wildcards() {
        assertThat(WorkspaceGlob.isGlob("out/*.txt")).isTrue();
        assertThat(WorkspaceGlob.isGlob("out/a?.txt")).isTrue();
        assertThat(WorkspaceGlob.isGlob("out/{a,b}")).isTrue();
        assertThat(WorkspaceGlob.isGlob("out/a.txt")).isFalse();
    }

    @ParameterizedTest
    @CsvSource({
            "**/.env, .env, true",
            "**/.env, a/b/.env, true",
            "**/.env, a/.envrc, false",
            "*.key, a.key, true",
            "*.key, dir/a.key, false",
            "secrets/**, secrets/a/b, true",
            "secrets/**, secretsx/a, false",
            "file?.txt, file1.txt, true",
            "file?.txt, file/.txt, false",
            "[ab].txt, a.txt, true",
            "[!ab].txt, c.txt, true",
            "[!ab].txt, a.txt, false",
            "a.b, axb, false",
            "(x), (x), true",
            "a/**/b, a/b, true",
            "a/**/b, a/x/y/b, true",
            "'out/*.{png,jpg}', out/x.jpg, true",
            "'out/*.{png,jpg}', out/x.gif, false",
    })
    void should_match_like_a_shell_glob(String glob, String path, boolean expected) {
        assertThat(WorkspaceGlob.compile(glob).matches(path)).isEqualTo(expected);
    }

    @Test
    void should_refuse_unclosed_class_when_compiling() {
        assertThatThrownBy(() -> WorkspaceGlob.compile("[abc")).isInstanceOf(InvalidSpecException.class);
    }
}
