package dev.codeexec.spring.it;

import static dev.codeexec.langchain4j.ScriptedOpenAi.lastToolResult;
import static dev.codeexec.langchain4j.ScriptedOpenAi.toolResultsThisTurn;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.codeexec.governance.ExecutionEvent;
import dev.codeexec.governance.RecordingListener;
import dev.codeexec.governance.RefusalKind;
import dev.codeexec.governance.RunOutcome;
import dev.codeexec.governance.micrometer.MicrometerExecutionListener;
import dev.codeexec.langchain4j.ScriptedOpenAi;
import dev.codeexec.langchain4j.ScriptedOpenAi.Reply;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The starter in a Spring Boot application: an {@code @AiService} conversation with the scripted OpenAI endpoint that
 * calls {@code workspace_exec} twice on the local engine; the application's approver denies the second call, the model
 * reads the denial, and nothing of it ran; the events and metrics of both calls are recorded. Then the response
 * processor (the application wraps its chat model bean) runs a lone code block, and the approver denies another.
 */
@SpringBootTest(classes = CodeExecTestApplication.class)
class CodeExecSpringBootIT {

    @TempDir
    static Path dir;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        registry.add("codeexec.backend", () -> "local");
        registry.add("codeexec.local.base-dir", () -> dir.resolve("workspaces").toString());
        registry.add("codeexec.artifacts.dir", () -> dir.resolve("artifacts").toString());
    }

    @Autowired
    Analyst analyst;
    @Autowired
    ScriptedOpenAi openAi;
    @Autowired
    RecordingListener events;
    @Autowired
    SimpleMeterRegistry metrics;

    @BeforeEach
    void reset() {
        events.clear();
        metrics.clear();
        openAi.reset();
    }

    @Test
    void should_run_a_conversation_with_an_approved_and_a_denied_command() throws IOException {
        openAi.script(req -> switch (toolResultsThisTurn(req)) {
            case 0 -> Reply.tool("call_1", "workspace_exec",
                    Map.of("command", "echo hello from spring > out/greeting.txt && cat out/greeting.txt"));
            case 1 -> Reply.tool("call_2", "workspace_exec", Map.of("command", "touch work/forbidden-marker"));
            default -> Reply.text("Finished. Last result: " + lastToolResult(req));
        });

        String answer = analyst.chat("conversation-1", "Write a greeting, then mark the forbidden file.");

        assertThat(answer).startsWith("Finished. Last result: error: not approved: commands on forbidden files are "
                + "not approved. Nothing was run or changed");
        List<JsonNode> requests = openAi.requests();
        assertThat(requests).hasSize(3);
        assertThat(requests.get(0).path("tools").toString()).as("the @AiService got the tools with no code of its own")
                .contains("workspace_exec").contains("workspace_write_file");
        assertThat(requests.get(0).path("tools").findValuesAsText("name")).as("offered once: the ToolProvider bean, "
                + "not also the @Tool bean").containsOnlyOnce("workspace_exec");
        assertThat(lastToolResult(requests.get(1))).startsWith("exit_code: 0").contains("hello from spring");
        assertThat(exists("greeting.txt")).isTrue();
        assertThat(exists("forbidden-marker")).as("the denied command ran nothing").isFalse();

        assertThat(events.of(ExecutionEvent.RunFinished.class)).singleElement().satisfies(e -> {
            assertThat(e.outcome()).isEqualTo(RunOutcome.SUCCESS);
            assertThat(e.conversationId()).isEqualTo("conversation-1");
            assertThat(e.toolName()).isEqualTo("workspace_exec");
        });
        assertThat(events.of(ExecutionEvent.Refusal.class)).singleElement()
                .satisfies(e -> assertThat(e.kind()).isEqualTo(RefusalKind.APPROVAL));
        assertThat(metrics.get(MicrometerExecutionListener.RUNS).tags("outcome", "success").timer().count())
                .isEqualTo(1);
        assertThat(metrics.get(MicrometerExecutionListener.REFUSALS).tags("kind", "approval").counter().count())
                .isEqualTo(1);
    }

    @Test
    void should_run_a_lone_code_block_of_an_answer_through_the_response_processor_and_the_approver() throws IOException {
        openAi.script(req -> {
            String tool = lastToolResult(req);
            if (tool != null) {
                return Reply.text("Ran it: " + tool);
            }
            return ScriptedOpenAi.lastUser(req).contains("forbidden")
                    ? Reply.text("```bash\ntouch forbidden-block-marker\n```")
                    : Reply.text("```bash\necho block ran > ../out/block.txt && cat ../out/block.txt\n```");
        });

        String ran = analyst.chat("conversation-2", "Run a block.");
        String denied = analyst.chat("conversation-2", "Run a forbidden block.");

        assertThat(ran).startsWith("Ran it: ").contains("block ran");
        assertThat(exists("block.txt")).isTrue();
        assertThat(denied).startsWith("Ran it: error: not approved: commands on forbidden files are not approved.");
        assertThat(exists("forbidden-block-marker")).isFalse();
        assertThat(events.of(ExecutionEvent.RunFinished.class)).singleElement()
                .satisfies(e -> assertThat(e.toolName()).isEqualTo("execute_code"));
    }

    private static boolean exists(String name) throws IOException {
        try (Stream<Path> s = Files.walk(dir.resolve("workspaces"))) {
            return s.anyMatch(p -> p.getFileName().toString().equals(name));
        }
    }
}
