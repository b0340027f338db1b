package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GlobTest {

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
    })
    void should_match_like_a_shell_glob(String glob, String path, boolean expected) {
        assertThat(Glob.compile(glob).matches(path)).isEqualTo(expected);
    }

    @org.junit.jupiter.api.Test
    void should_refuse_unclosed_class() {
        assertThatThrownBy(() -> Glob.compile("[abc")).isInstanceOf(InvalidSpecException.class);
    }
}
