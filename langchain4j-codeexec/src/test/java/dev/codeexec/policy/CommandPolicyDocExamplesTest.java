package dev.codeexec.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.PolicyViolationException;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The examples of docs/command-policy.md, compiled and run. */
class CommandPolicyDocExamplesTest {

    @Test
    void should_work_as_the_quick_start_shows() {
        CommandPolicy policy = CommandPolicy.builder()
                .allow("ls", "cat", "grep", "wc", "sort", "python3")
                .build();

        ParsedCommand cmd = policy.check("grep -c error work/log.txt | sort")
                .resolveExecutables("/usr/local/bin:/usr/bin:/bin", Set.of("/usr/bin/grep", "/usr/bin/sort")::contains);

        assertThat(cmd.toShellScript()).isEqualTo("/usr/bin/grep -c error work/log.txt | /usr/bin/sort");
        assertThatThrownBy(() -> policy.check("curl http://example.com"))
                .isInstanceOf(PolicyViolationException.class)
                .hasMessageStartingWith("command 'curl' is not in the policy's allow list; allowed commands: cat, grep");
    }

    @Test
    void should_work_as_the_custom_validator_example_shows() {
        CommandPolicy policy = CommandPolicy.builder()
                .allow("python3", "mytool")
                .validator("python", ArgumentValidators.pythonAllowingInlineCode())
                .validator("mytool", argv -> {
                    if (argv.contains("--hook")) {
                        throw new PolicyViolationException("mytool --hook runs a command; the policy does not allow it");
                    }
                })
                .build();

        assertThat(policy.check("python3 -c 'print(1)'").commands()).containsExactly("python3");
        assertThatThrownBy(() -> policy.check("mytool --hook x")).hasMessageContaining("--hook");
        assertThat(policy.check("mytool --safe").commands()).containsExactly("mytool");
    }
}
