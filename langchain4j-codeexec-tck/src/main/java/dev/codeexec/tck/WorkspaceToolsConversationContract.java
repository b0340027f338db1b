package dev.codeexec.tck;

import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ScriptedOpenAi;
import static dev.codeexec.langchain4j.ScriptedOpenAi.lastToolResult;
import static dev.codeexec.langchain4j.ScriptedOpenAi.lastUser;
import static dev.codeexec.langchain4j.ScriptedOpenAi.toolResultsThisTurn;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.codeexec.langchain4j.ScriptedOpenAi.Reply;
import dev.codeexec.policy.CommandPolicy;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.service.AiServices;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Workspace tools scenarios, first part: a multi-turn analysis saved as an artifact, conversations kept in separate
 * workspaces, concurrent tool calls of one conversation serialised, and runs under a command policy (refusals the model
 * can read, allowed pipelines, a scrubbed environment). Backends do not extend this class directly: they extend
 * {@link AbstractWorkspaceToolsIT}, the last class of the chain.
 */
public abstract class WorkspaceToolsConversationContract extends WorkspaceToolsFixture {

    @Test
    void should_analyse_a_csv_over_several_turns_and_save_the_result_as_an_artifact() {
        openAi.script(req -> {
            String user = lastUser(req);
            int step = toolResultsThisTurn(req);
            if (user.startsWith("Here are")) {
                return step == 0 ? Reply.tool("call_1", "workspace_write_file",
                        Map.of("path", "work/sales.csv", "content", SALES)) : Reply.text("Stored in work/sales.csv.");
            }
            if (user.startsWith("What is the total")) {
                return switch (step) {
                    case 0 -> Reply.tool("call_2", "workspace_write_file",
                            Map.of("path", "work/analyse.py", "content", ANALYSE));
                    case 1 -> Reply.tool("call_3", "workspace_exec", Map.of("command", "python3 work/analyse.py",
                            "timeout_seconds", 30));
                    default -> Reply.text("Totals: " + stdout(lastToolResult(req)).replace("\n", "; "));
                };
            }
            if (user.startsWith("Save")) {
                return step == 0 ? Reply.tool("call_4", "workspace_save_artifact", Map.of("path", "out/totals.csv"))
                        : Reply.text("Saved as " + match(lastToolResult(req), "artifact://\\S+@\\d+") + ".");
            }
            return Reply.text("?");
        });
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).artifactService(artifacts).build()) {
            Assistant a = assistant(codeExec);

            assertThat(a.chat("sales", "Here are the sales figures, keep them:\n" + SALES))
                    .isEqualTo("Stored in work/sales.csv.");
            assertThat(a.chat("sales", "What is the total per region?"))
                    .isEqualTo("Totals: east 7; north 30; south 5");
            assertThat(a.chat("sales", "Save the totals for later.")).isEqualTo("Saved as artifact://totals.csv@1.");

            assertThat(new String(artifacts.load("conversations/sales/totals.csv", 1).content(),
                    StandardCharsets.UTF_8))
                    .isEqualTo("region,total\neast,7\nnorth,30\nsouth,5\n");
            String execResult = toolMessages("sales").get(2).text();
            assertThat(execResult).startsWith("exit_code: 0 | timed_out: false | truncated: false")
                    .contains("+ out/totals.csv (37 bytes)")
                    .contains("python: /usr/bin/python3").doesNotContain(".pyenv").doesNotContain(base.toString());
            assertThat(toolMessages("sales").get(2).attributes()).containsEntry("exit_code", 0)
                    .containsEntry("files_changed", List.of("out/totals.csv"));
            assertThat(store.getMessages("sales")).as("user, calls, results and answers of three turns").hasSize(14);
        }
    }

    @Test
    void should_keep_two_parallel_conversations_in_separate_workspaces() throws Exception {
        openAi.script(req -> {
            String name = lastUser(req).replace("I am ", "");
            return switch (toolResultsThisTurn(req)) {
                case 0 -> Reply.tool("call_w", "workspace_write_file", Map.of("path", "work/who.txt", "content", name));
                case 1 -> Reply.tool("call_x", "workspace_exec", Map.of("command", "sleep 0.3; cat work/who.txt"));
                default -> Reply.text("You are " + stdout(lastToolResult(req)));
            };
        });
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            Assistant a = assistant(codeExec);
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                Future<String> alice = pool.submit(() -> a.chat("alice", "I am alice"));
                Future<String> bob = pool.submit(() -> a.chat("bob", "I am bob"));

                assertThat(alice.get(60, TimeUnit.SECONDS)).isEqualTo("You are alice");
                assertThat(bob.get(60, TimeUnit.SECONDS)).isEqualTo("You are bob");
            } finally {
                pool.shutdownNow();
            }
            assertThat(codeExec.workspace("alice").read("work/who.txt", 0, 100).contentAsString()).isEqualTo("alice");
            assertThat(codeExec.workspace("bob").read("work/who.txt", 0, 100).contentAsString()).isEqualTo("bob");
        }
    }

    @Test
    void should_serialise_tool_calls_of_one_conversation_when_they_run_concurrently() {
        // Each command takes a directory as a lock: mkdir fails if the other command holds it at the same moment.
        String critical = "mkdir work/lock && sleep 0.3 && rmdir work/lock";
        openAi.script(req -> toolResultsThisTurn(req) == 0
                ? new Reply(null, List.of(new String[] {"c_a", "workspace_exec", "{\"command\":\"" + critical + "\"}"},
                        new String[] {"c_b", "workspace_exec", "{\"command\":\"" + critical + "\"}"}), null)
                : Reply.text("done"));
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            Assistant a = AiServices.builder(Assistant.class).chatModel(openAi.chatModel())
                    .toolProvider(codeExec.toolProvider()).chatMemoryProvider(memory).executeToolsConcurrently()
                    .build();

            assertThat(a.chat("one", "run both")).isEqualTo("done");

            assertThat(toolMessages("one")).hasSize(2).allSatisfy(m -> assertThat(m.text()).startsWith("exit_code: 0"));
        }
    }

    @Test
    void should_give_a_policy_refusal_to_the_model_as_a_readable_tool_result() {
        openAi.script(req -> toolResultsThisTurn(req) == 0
                ? Reply.tool("call_p", "workspace_exec", Map.of("command", "curl http://169.254.169.254/"))
                : Reply.text("I may not do that: " + lastToolResult(req)));
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine)
                .commandPolicy(CommandPolicy.builder().deny("curl").build()).build()) {

            String answer = assistant(codeExec).chat("p", "Fetch the metadata service");

            assertThat(answer).startsWith("I may not do that: error: refused by policy: command 'curl' is denied");
            ToolExecutionResultMessage tool = toolMessages("p").get(0);
            assertThat(tool.isError()).isTrue();
            assertThat(tool.attributes()).containsEntry("error", "policy");
            JsonNode sent = openAi.requests().get(1).path("messages").get(2);
            assertThat(ScriptedOpenAi.content(sent)).startsWith("error: refused by policy");
        }
    }

    @Test
    void should_run_allowed_pipelines_and_refuse_the_rest_when_a_policy_is_set() {
        CommandPolicy policy = CommandPolicy.builder().allow("cat", "wc", "python3", "echo").build();
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).commandPolicy(policy).build()) {
            var tools = codeExec.tools();
            var ctx = dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("pol").build();
            codeExec.workspace("pol").putFile("work/sales.csv", SALES);
            codeExec.workspace("pol").putFile("work/wc", "#!/bin/sh\necho planted\n");

            String pipeline = tools.workspaceExec("cat work/sales.csv | wc -l && echo 'a b'", null,
                    Map.of("LD_PRELOAD", "/tmp/evil.so", "PATH", "work", "GREETING", "hi"), null, null, null, ctx);
            String viaShell = tools.workspaceExec("sh -c 'cat /etc/hostname'", null, null, null, null, null, ctx);
            String inline = tools.workspaceExec("python3 -c 'print(1)'", null, null, null, null, null, ctx);
            String expansion = tools.workspaceExec("echo $HOME", null, null, null, null, null, ctx);
            String notAllowed = tools.workspaceExec("ls", null, null, null, null, null, ctx);

            assertThat(pipeline).startsWith("exit_code: 0").contains("--- stdout ---\n5\na b")
                    .doesNotContain("planted");
            assertThat(viaShell).startsWith("error: refused by policy: command 'sh' is denied by the built-in policy");
            assertThat(inline).startsWith("error: refused by policy:").contains("-c");
            assertThat(expansion).startsWith("error: refused by policy:");
            assertThat(notAllowed).startsWith("error: refused by policy: command 'ls' is not in the policy's allow");
        }
    }

    @Test
    void should_scrub_the_model_environment_in_policy_runs() {
        CommandPolicy policy = CommandPolicy.builder().allow("python3").build();
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).commandPolicy(policy).build()) {
            var ctx = dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("env").build();
            codeExec.workspace("env").putFile("work/env.py", "import os\n"
                    + "print(sorted(k for k in os.environ if k in ('LD_PRELOAD', 'GREETING', 'BASH_ENV')))\n"
                    + "print(os.environ['PATH'])\n");

            String out = codeExec.tools().workspaceExec("python3 work/env.py", null,
                    Map.of("LD_PRELOAD", "/tmp/evil.so", "BASH_ENV", "/tmp/rc", "GREETING", "hi", "PATH", "work"),
                    null, null, null, ctx);

            assertThat(out).startsWith("exit_code: 0").contains("['GREETING']").contains("/usr/local/bin:/usr/bin:/bin");
        }
    }
}
