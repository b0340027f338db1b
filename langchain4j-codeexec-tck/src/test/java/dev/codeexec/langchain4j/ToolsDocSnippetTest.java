package dev.codeexec.langchain4j;

import dev.codeexec.tck.AbstractWorkspaceToolsIT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.langchain4j.ScriptedOpenAi.Reply;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.testing.Requirements;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The "Add it to an AI service" snippet of docs/tools.md, compiled and run, so it stays true. */
class ToolsDocSnippetTest {

    // tag::assistant[]
    interface Assistant {
        String chat(@MemoryId String conversationId, @UserMessage String message);
    }
    // end::assistant[]

    @Test
    void should_run_the_snippet_of_the_tools_page() {
        Requirements.requireCommand("python3");
        try (ScriptedOpenAi openAi = new ScriptedOpenAi(); LocalEngine engine = LocalEngine.create()) {
            openAi.script(req -> ScriptedOpenAi.toolResultsThisTurn(req) == 0
                    ? Reply.tool("call_1", "workspace_exec", Map.of("command", "python3 -c 'print(2 ** 10)'"))
                    : Reply.text("2^10 = " + AbstractWorkspaceToolsIT.stdout(ScriptedOpenAi.lastToolResult(req))));
            ChatModel model = openAi.chatModel();

            // tag::snippet[]
            CodeExecution codeExec = CodeExecution.builder()
                    .engine(engine)                                  // LocalEngine, SandboxEngine, ...
                    .artifactService(new InMemoryArtifactService())  // where workspace_save_artifact saves
                    .build();
            Assistant assistant = AiServices.builder(Assistant.class)
                    .chatModel(codeExec.wrap(model))                 // runs an answer that is one ```python block
                    .toolProvider(codeExec.toolProvider())           // workspace_exec, file and artifact tools
                    .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(50))
                    .build();
            String answer = assistant.chat("conversation-1", "What is 2 to the power of 10?");
            // end::snippet[]

            assertThat(answer).isEqualTo("2^10 = 1024");
            codeExec.close();
        }
    }
}
