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

class GlobsTest {

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
        assertThat(Globs.compile(glob).base()).isEqualTo(base);
    }

    @Test
    void should_cross_directories_only_when_glob_has_double_star() {
        Globs deep = Globs.compile("out/**");
        Globs flat = Globs.compile("out/*");
        Globs anyCsv = Globs.compile("**/*.csv");

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
        Globs g = Globs.compile("out/*.{png,jpg}");

        assertThat(Map.of("out/a.png", g.matches("out/a.png"), "out/b.jpg", g.matches("out/b.jpg"), "out/c.gif",
                g.matches("out/c.gif"))).containsExactlyInAnyOrderEntriesOf(Map.of("out/a.png", true, "out/b.jpg",
                true, "out/c.gif", false));
        assertThat(Globs.compile("out/f[0-9].txt").matches("out/f7.txt")).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"/etc/**", "~/x", "../**", "out/../../x", "$WORKSPACE_DIR/../x"})
    void should_refuse_glob_when_it_escapes(String glob) {
        assertThatThrownBy(() -> Globs.compile(glob)).isInstanceOf(PathEscapeException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "  ", "out\\*", "out/[a"})
    void should_refuse_glob_when_blank_or_malformed(String glob) {
        assertThatThrownBy(() -> Globs.compile(glob)).isInstanceOf(InvalidSpecException.class)
                .isNotInstanceOf(PathEscapeException.class);
    }

    @Test
    void should_detect_glob_syntax_when_text_has_wildcards() {
        assertThat(Globs.isGlob("out/*.txt")).isTrue();
        assertThat(Globs.isGlob("out/a?.txt")).isTrue();
        assertThat(Globs.isGlob("out/{a,b}")).isTrue();
        assertThat(Globs.isGlob("out/a.txt")).isFalse();
    }
}
