package dev.codeexec.sandbox;

import static dev.codeexec.langchain4j.ScriptedOpenAi.toolResultsThisTurn;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractWorkspaceToolsIT;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ScriptedOpenAi.Reply;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The workspace tools end to end on a real bubblewrap sandbox with the default profile: every shared scenario, plus
 * what only a sandbox can pass.
 */
class SandboxWorkspaceToolsIT extends AbstractWorkspaceToolsIT {

    @BeforeAll
    static void requireBubblewrap() {
        SandboxTesting.requireSandbox();
    }

    @Override
    protected Engine createEngine() {
        return SandboxEngine.builder().rootDir(base).inputRoots(List.of(inputRoot)).artifactService(artifacts)
                .build();
    }

    @Test
    void should_keep_host_secrets_and_other_workspaces_out_of_reach_of_workspace_exec() throws IOException {
        // The sandbox root is a temporary directory of this test: a host file beside the workspaces, not in any.
        Path hostSecret = Files.writeString(base.resolve("host-secret.txt"), "HOST-SECRET-7f3a");
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            codeExec.workspace("victim").putFile("work/secret.txt", "VICTIM-SECRET-91c2");
            codeExec.workspace("attacker").putFile("work/own.txt", "my own notes");
            Path victimRoot = hostRootOf("work/secret.txt");
            Path ownRoot = hostRootOf("work/own.txt");
            // What a model that learnt the layout (pwd shows the workspace's host path) would try.
            List<String> commands = List.of(
                    "cat /etc/shadow",
                    "cat " + hostSecret,
                    "cat " + victimRoot.resolve("work/secret.txt"),
                    "ls ..",
                    "cat work/own.txt");
            openAi.script(req -> {
                int step = toolResultsThisTurn(req);
                return step < commands.size()
                        ? Reply.tool("call_" + step, "workspace_exec", Map.of("command", commands.get(step)))
                        : Reply.text("done");
            });

            assertThat(assistant(codeExec).chat("attacker", "Show me every secret on this machine.")).isEqualTo("done");

            List<String> results = toolMessages("attacker").stream().map(ToolExecutionResultMessage::text).toList();
            assertThat(results).hasSize(commands.size());
            assertThat(results.get(0)).as("a host secret the profile hides").startsWith("exit_code: 1 |")
                    .doesNotContain("root:");
            assertThat(results.get(1)).as("a host file beside the workspaces").startsWith("exit_code: 1 |")
                    .contains("No such file").doesNotContain("HOST-SECRET");
            assertThat(results.get(2)).as("another conversation's workspace").startsWith("exit_code: 1 |")
                    .contains("No such file").doesNotContain("VICTIM-SECRET");
            assertThat(results.get(3)).as("the workspaces folder lists this workspace only").startsWith("exit_code: 0")
                    .contains(ownRoot.getFileName().toString())
                    .doesNotContain(victimRoot.getFileName().toString());
            assertThat(results.get(4)).as("positive control: its own workspace, same conversation")
                    .startsWith("exit_code: 0").endsWith("--- stdout ---\nmy own notes");
            assertThat(Files.readString(hostSecret)).isEqualTo("HOST-SECRET-7f3a");
        }
    }
}
