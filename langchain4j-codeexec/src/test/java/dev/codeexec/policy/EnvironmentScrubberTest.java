package dev.codeexec.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The environment scrubber; the first tests are the reference design's envscrub cases. */
class EnvironmentScrubberTest {

    private static final EnvironmentScrubber SCRUBBER = EnvironmentScrubber.defaults();

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"HOME", "ENV", "BASH_ENV", "PROMPT_COMMAND", "PS4", "SHELL", "SHELLOPTS", "BASHOPTS",
            "PATH", "IFS", "CDPATH", "GLOBIGNORE", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
            "DYLD_LIBRARY_PATH", "DYLD_FORCE_FLAT_NAMESPACE", "BASH_FUNC_ls%%", "BASH_FUNC_grep"})
    void should_drop_the_reference_list_when_scrubbing(String name) {
        assertThat(SCRUBBER.scrub(Map.of(name, "x", "LANG", "C.UTF-8"))).containsOnlyKeys("LANG");
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"PATH=.", "", "NEW\nLINE", "NULL\u0000", "CARRIAGE\rRETURN", "1ABC", "A-B", "A B",
            "É"})
    void should_drop_malformed_names(String name) {
        assertThat(SCRUBBER.isAllowed(name, "x")).isFalse();
        assertThat(SCRUBBER.scrub(Map.of(name, "x"))).isEmpty();
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"Path", "Home", "Ld_Preload", "bash_func_grep", "path", "bash_env", "Git_Ssh_Command"})
    void should_drop_names_case_insensitively_on_every_os(String name) {
        // The reference folds only on Windows; a mixed-case PATH is harmless on Linux, so folding everywhere costs
        // nothing and protects a Windows child.
        assertThat(SCRUBBER.isAllowed(name, "x")).isFalse();
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"a\u0000b", "line\nbreak", "carriage\rreturn"})
    void should_drop_values_with_nul_cr_or_lf(String value) {
        assertThat(SCRUBBER.scrub(Map.of("MY_VAR", value))).isEmpty();
        // positive control: the same name with a clean value passes
        assertThat(SCRUBBER.scrub(Map.of("MY_VAR", "clean value"))).containsEntry("MY_VAR", "clean value");
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"GIT_SSH_COMMAND", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_PARAMETERS",
            "GIT_EXEC_PATH", "GIT_PAGER", "GIT_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_DIR", "GIT_TEMPLATE_DIR", "PAGER",
            "EDITOR", "VISUAL", "LESSOPEN", "PYTHONSTARTUP", "PYTHONPATH", "PERL5OPT", "RUBYOPT", "NODE_OPTIONS",
            "JAVA_TOOL_OPTIONS", "TAR_OPTIONS", "GCONV_PATH", "OPENSSL_CONF", "XDG_CONFIG_HOME", "LUA_INIT",
            "LUA_INIT_5_4", "LD_BIND_NOW", "DYLD_FRAMEWORK_PATH", "ZDOTDIR", "PS1", "VIMINIT", "SSH_ASKPASS"})
    void should_drop_variables_through_which_tools_run_code(String name) {
        assertThat(SCRUBBER.isAllowed(name, "sh -c id")).isFalse();
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"LANG", "LC_ALL", "TZ", "MPLBACKEND", "PYTHONUNBUFFERED", "PYTHONIOENCODING",
            "PYTHONDONTWRITEBYTECODE", "MY_VAR", "_x", "GIT_AUTHOR_NAME", "GIT_COMMITTER_EMAIL", "DATA_DIR",
            "PATHS_TO_SCAN", "HOMEPAGE", "ENVIRONMENT"})
    void should_keep_ordinary_variables(String name) {
        assertThat(SCRUBBER.scrub(Map.of(name, "v"))).containsEntry(name, "v");
    }

    @Test
    void should_be_a_pure_function_when_scrubbing() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("B", "1");
        env.put("PATH", "work/bin");
        env.put("A", "2");
        env.put("LD_PRELOAD", "work/evil.so");
        Map<String, String> copy = new LinkedHashMap<>(env);

        Map<String, String> scrubbed = SCRUBBER.scrub(env);

        assertThat(scrubbed).containsExactly(Map.entry("B", "1"), Map.entry("A", "2"));
        assertThat(env).isEqualTo(copy);
        assertThatThrownBy(() -> scrubbed.put("X", "y")).isInstanceOf(UnsupportedOperationException.class);
        assertThat(SCRUBBER.scrub(null)).isEmpty();
        Map<String, String> withNull = new HashMap<>();
        withNull.put("A", null);
        withNull.put(null, "x");
        assertThat(SCRUBBER.scrub(withNull)).isEmpty();
    }

    @Test
    void should_drop_more_when_built_with_extra_names_and_prefixes() {
        EnvironmentScrubber custom = EnvironmentScrubber.builder().drop("secret_token").dropPrefix("aws_").build();

        assertThat(custom.scrub(Map.of("AWS_SECRET_ACCESS_KEY", "x", "SECRET_TOKEN", "y", "LANG", "C")))
                .containsOnlyKeys("LANG");
        assertThat(custom.droppedNames()).contains("SECRET_TOKEN", "PATH");
        assertThat(custom.droppedPrefixes()).contains("AWS_", "BASH_FUNC_");
        assertThat(custom).isNotEqualTo(SCRUBBER);
        assertThat(EnvironmentScrubber.builder().build()).isEqualTo(SCRUBBER).hasSameHashCodeAs(SCRUBBER);
        assertThatThrownBy(() -> EnvironmentScrubber.builder().drop("A-B")).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("(A-B)");
    }
}
