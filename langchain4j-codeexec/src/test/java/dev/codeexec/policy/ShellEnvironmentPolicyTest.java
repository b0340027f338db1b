package dev.codeexec.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ShellEnvironmentPolicyTest {

    private static final Map<String, String> HOST = Map.of("PATH", "/usr/bin:/bin", "HOME", "/root", "LANG",
            "en_US.UTF-8", "OPENAI_API_KEY", "sk-1", "github_token", "gh-1", "DbPassword", "pw", "AWS_CREDENTIALS",
            "c", "MY_SECRET_X", "s", "EDITOR", "vim", "JAVA_HOME", "/opt/java");
    private static final Map<String, String> RUNTIME = Map.of("HOME", "/ws/home", "TMPDIR", "/ws/tmp",
            "WORKSPACE_DIR", "/ws");

    @Test
    void should_inherit_core_minus_credentials_by_default() {
        Map<String, String> env = ShellEnvironmentPolicy.sandboxDefault().resolve(HOST, Map.of(), false, RUNTIME);
        assertThat(env).containsEntry("PATH", "/usr/bin:/bin").containsEntry("LANG", "en_US.UTF-8")
                .containsEntry("HOME", "/ws/home").containsEntry("WORKSPACE_DIR", "/ws")
                .doesNotContainKeys("EDITOR", "JAVA_HOME", "OPENAI_API_KEY");
        assertThat(ShellEnvironmentPolicy.sandboxDefault().inherit()).isEqualTo(ShellEnvironmentPolicy.Inherit.CORE);
        assertThat(ShellEnvironmentPolicy.sandboxDefault().applyDefaultExcludes()).isTrue();
    }

    @Test
    void should_drop_credential_names_ignoring_case_when_inheriting_all() {
        Map<String, String> env = ShellEnvironmentPolicy.builder().inherit(ShellEnvironmentPolicy.Inherit.ALL).build()
                .resolve(HOST, null, false, RUNTIME);
        assertThat(env).containsKeys("EDITOR", "JAVA_HOME", "PATH")
                .doesNotContainKeys("OPENAI_API_KEY", "github_token", "DbPassword", "AWS_CREDENTIALS", "MY_SECRET_X");
        Map<String, String> raw = ShellEnvironmentPolicy.builder().inherit(ShellEnvironmentPolicy.Inherit.ALL)
                .applyDefaultExcludes(false).build().resolve(HOST, null, false, RUNTIME);
        assertThat(raw).containsKey("OPENAI_API_KEY");
    }

    @Test
    void should_apply_exclude_patterns_then_set_then_run_env() {
        ShellEnvironmentPolicy p = ShellEnvironmentPolicy.builder().inherit(ShellEnvironmentPolicy.Inherit.ALL)
                .exclude("java_*", "editor").set("EDITOR", "nano").set("FROM_SET", "1").build();
        Map<String, String> env = p.resolve(HOST, Map.of("FROM_SET", "2", "RUN", "r"), false, RUNTIME);
        assertThat(env).doesNotContainKey("JAVA_HOME").containsEntry("EDITOR", "nano").containsEntry("FROM_SET", "2")
                .containsEntry("RUN", "r");
    }

    @Test
    void should_keep_only_allow_list_but_always_runtime_variables() {
        ShellEnvironmentPolicy p = ShellEnvironmentPolicy.builder().inherit(ShellEnvironmentPolicy.Inherit.ALL)
                .includeOnly("PATH", "L*").build();
        Map<String, String> env = p.resolve(HOST, Map.of("RUN", "r"), false, RUNTIME);
        assertThat(env.keySet()).containsExactlyInAnyOrder("PATH", "LANG", "HOME", "TMPDIR", "WORKSPACE_DIR");
    }

    @Test
    void should_inject_runtime_variables_last() {
        Map<String, String> env = ShellEnvironmentPolicy.sandboxDefault().resolve(HOST,
                Map.of("HOME", "/elsewhere", "WORKSPACE_DIR", "/x"), false, RUNTIME);
        assertThat(env).containsEntry("HOME", "/ws/home").containsEntry("WORKSPACE_DIR", "/ws");
    }

    @Test
    void should_fall_back_to_standard_path() {
        Map<String, String> env = ShellEnvironmentPolicy.builder().inherit(ShellEnvironmentPolicy.Inherit.NONE).build()
                .resolve(HOST, null, false, null);
        assertThat(env).containsOnly(Map.entry("PATH", ShellEnvironmentPolicy.CLEAN_PATH));
    }

    @Test
    void should_start_from_minimal_environment_when_clean() {
        ShellEnvironmentPolicy p = ShellEnvironmentPolicy.builder().inherit(ShellEnvironmentPolicy.Inherit.ALL)
                .set("FROM_SET", "1").build();
        Map<String, String> env = p.resolve(HOST, Map.of("ONLY", "this"), true, RUNTIME);
        assertThat(env.keySet()).containsExactlyInAnyOrder("PATH", "LANG", "ONLY", "HOME", "TMPDIR",
                "WORKSPACE_DIR");
        assertThat(env).containsEntry("LANG", "C.UTF-8").containsEntry("PATH", ShellEnvironmentPolicy.CLEAN_PATH);
    }

    @Test
    void should_parse_inheritance_and_refuse_bad_input() {
        assertThat(ShellEnvironmentPolicy.Inherit.parse("inherit-all")).isEqualTo(ShellEnvironmentPolicy.Inherit.ALL);
        assertThat(ShellEnvironmentPolicy.Inherit.parse("Core")).isEqualTo(ShellEnvironmentPolicy.Inherit.CORE);
        assertThat(ShellEnvironmentPolicy.Inherit.parse("none")).isEqualTo(ShellEnvironmentPolicy.Inherit.NONE);
        assertThatThrownBy(() -> ShellEnvironmentPolicy.Inherit.parse("some"))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("'some'");
        assertThatThrownBy(() -> ShellEnvironmentPolicy.builder().set("A=B", "x"))
                .isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> ShellEnvironmentPolicy.builder().exclude(" "))
                .isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_not_print_values() {
        ShellEnvironmentPolicy p = ShellEnvironmentPolicy.builder().set("TOKEN", "very-secret").build();
        assertThat(p.toString()).contains("TOKEN").doesNotContain("very-secret");
        assertThat(p.toBuilder().build()).isEqualTo(p).hasSameHashCodeAs(p);
    }
}
