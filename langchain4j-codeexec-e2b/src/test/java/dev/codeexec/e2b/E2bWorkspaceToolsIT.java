package dev.codeexec.e2b;

import static dev.codeexec.langchain4j.ScriptedOpenAi.lastUser;
import static dev.codeexec.langchain4j.ScriptedOpenAi.toolResultsThisTurn;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.AbstractWorkspaceToolsIT;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ScriptedOpenAi.Reply;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The workspace tools end to end on E2bEngine, a sandbox per conversation, against the fake E2B: every shared
 * scenario, plus what the code interpreter adds: {@code execute_code} keeps python state per conversation, and a
 * displayed image comes back as a file in {@code out/}.
 */
class E2bWorkspaceToolsIT extends AbstractWorkspaceToolsIT {

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.python("e2b-tools");

    @Override
    protected Engine createEngine() {
        return FAKE.engine().baseDir(base.toString()).inputRoots(List.of(inputRoot)).artifactService(artifacts)
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
            return Reply.tool("c2", "execute_code", Map.of("language", "python", "code", "statistics.mean(prices)"));
        });
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            Assistant a = assistant(codeExec);

            a.chat("shop", "Load the prices.");
            a.chat("shop", "What is their mean?");
            a.chat("other", "What is their mean?");

            List<String> shop = toolMessages("shop").stream().map(ToolExecutionResultMessage::text).toList();
            assertThat(shop.get(0)).startsWith("exit_code: 0").contains("loaded 3");
            assertThat(shop.get(1)).startsWith("exit_code: 0").contains("--- output ---\n6");
            assertThat(toolMessages("other").get(0).text()).as("another conversation has a sandbox of its own")
                    .startsWith("exit_code: 1").contains("NameError");
        }
    }

    @Test
    void should_return_a_displayed_image_as_a_file_in_out() {
        String png = "import base64\nclass Chart:\n    def _repr_png_(self):\n        return base64.b64decode("
                + "'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==')\n"
                + "display(Chart())\nprint('drawn')";
        openAi.script(req -> toolResultsThisTurn(req) == 0
                ? Reply.tool("c1", "execute_code", Map.of("language", "python", "code", png))
                : Reply.text("drawn"));
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            assertThat(assistant(codeExec).chat("chart", "Draw it.")).isEqualTo("drawn");

            String result = toolMessages("chart").get(0).text();
            assertThat(result).startsWith("exit_code: 0").contains("[display saved as out/display_1.png (image/png,")
                    .contains("out/display_1.png");
            assertThat(codeExec.workspace("chart").read("out/display_1.png", 0, 8).content())
                    .startsWith(0x89, 'P', 'N', 'G');
        }
    }

    /** The sandbox's files are compared by listing (sizes and times through envd's Stat and ListDir): no kernel notices. */
    @Override
    protected boolean seesRewritesThatKeepSizeAndTime() {
        return false;
    }
}
