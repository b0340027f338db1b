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
                .allow("ls", "cat", "head", "grep", "wc", "sort")
                .build();

        ParsedCommand cmd = policy.check("grep -c error work/log.txt | sort")
                .resolveExecutables("/usr/local/bin:/usr/bin:/bin", Set.of("/usr/bin/grep", "/usr/bin/sort")::contains);

        assertThat(cmd.toShellScript()).isEqualTo("/usr/bin/grep -c error work/log.txt | /usr/bin/sort");
        assertThatThrownBy(() -> policy.check("curl http://example.com"))
                .isInstanceOf(PolicyViolationException.class)
                .hasMessageStartingWith("command 'curl' is not in the policy's allow list; allowed commands: cat, grep");
        assertThatThrownBy(() -> policy.check("sort -S 16K --compress-program=sh work/data.txt"))
                .isInstanceOf(PolicyViolationException.class)
                .hasMessageStartingWith("command 'sort' was refused by its argument validator: sort's "
                        + "'--compress-program'");
    }

    @Test
    void should_leave_no_command_of_the_quick_start_list_that_runs_a_program_through_its_options() {
        // The doc's list must stay free of interpreters; the one tool on it with such an option has a validator.
        CommandPolicy policy = CommandPolicy.builder().allow("ls", "cat", "head", "grep", "wc", "sort").build();

        assertThat(policy.allowedCommands()).doesNotContain("python3", "python", "sh", "node", "perl");
        assertThat(policy.validators()).containsKey("sort");
        assertThatThrownBy(() -> policy.check("sort --compress=sh f")).hasMessageContaining("(--compress-program)");
        // positive control: everyday sorting, into a file too
        assertThat(policy.check("sort -n -o out/sorted.txt work/data.txt").commands()).containsExactly("sort");
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
