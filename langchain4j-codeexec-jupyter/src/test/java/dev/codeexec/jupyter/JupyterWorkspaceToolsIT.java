package dev.codeexec.jupyter;

import static dev.codeexec.langchain4j.ScriptedOpenAi.lastUser;
import static dev.codeexec.langchain4j.ScriptedOpenAi.toolResultsThisTurn;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractWorkspaceToolsIT;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ScriptedOpenAi.Reply;
import dev.codeexec.testing.Requirements;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The workspace tools end to end on the Jupyter engine: every shared scenario, plus what a kernel adds: the
 * {@code execute_code} tool runs python in the conversation's kernel, so a later call sees what an earlier one left,
 * and a displayed chart comes back as a file in {@code out/}.
 */
class JupyterWorkspaceToolsIT extends AbstractWorkspaceToolsIT {

    @BeforeAll
    static void requireKernel() {
        Requirements.requireCommand("python3");
        JupyterTesting.requireKernel();
    }

    @Override
    protected Engine createEngine() {
        return JupyterEngine.builder().rootDir(base).inputRoots(List.of(inputRoot)).artifactService(artifacts)
                .build();
    }

    @Test
    void should_keep_python_state_across_execute_code_calls_of_one_conversation_only() {
        openAi.script(req -> {
            String user = lastUser(req);
            if (toolResultsThisTurn(req) > 0) {
                return Reply.text("ok");
            }
            if (user.startsWith("Load")) {
                return Reply.tool("c1", "execute_code", Map.of("language", "python", "code",
                        "import statistics\nprices = [3, 5, 10]\nprint('loaded', len(prices))"));
            }
            return Reply.tool("c2", "execute_code", Map.of("language", "python", "code",
                    "statistics.mean(prices)"));
        });
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            Assistant a = assistant(codeExec);

            a.chat("shop", "Load the prices.");
            a.chat("shop", "What is their mean?");
            a.chat("other", "What is their mean?");

            List<String> shop = toolMessages("shop").stream().map(ToolExecutionResultMessage::text).toList();
            assertThat(shop.get(0)).startsWith("exit_code: 0").contains("loaded 3");
            assertThat(shop.get(1)).startsWith("exit_code: 0").contains("--- output ---\n6");
            String other = toolMessages("other").get(0).text();
            assertThat(other).as("another conversation has a kernel of its own").startsWith("exit_code: 1")
                    .contains("NameError");
        }
    }

    @Test
    void should_return_a_displayed_chart_as_a_file_in_out() {
        JupyterTesting.requireMatplotlib();
        openAi.script(req -> toolResultsThisTurn(req) == 0
                ? Reply.tool("c1", "execute_code", Map.of("language", "python", "code",
                        "%matplotlib inline\nimport matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()"))
                : Reply.text("drawn"));
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            assertThat(assistant(codeExec).chat("chart", "Draw it.")).isEqualTo("drawn");

            String result = toolMessages("chart").get(0).text();
            assertThat(result).startsWith("exit_code: 0").contains("[display saved as out/display_1.png (image/png,")
                    .contains("--- files in out/ ---\nout/display_1.png");
            assertThat(codeExec.workspace("chart").read("out/display_1.png", 0, 8).content())
                    .startsWith(0x89, 'P', 'N', 'G');
        }
    }
}
