package dev.codeexec.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ScriptedOpenAi;
import dev.codeexec.langchain4j.ScriptedOpenAi.Reply;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The snippet of docs/spring-boot.md that wires the starter's beans into AiServices by hand, compiled and run. */
class SpringDocExampleTest {

    interface Assistant {
        String chat(@MemoryId String conversation, @UserMessage String message);
    }

    @TempDir
    Path dir;

    @Test
    void should_run_the_documented_manual_wiring() {
        try (ScriptedOpenAi openAi = new ScriptedOpenAi()) {
            openAi.script(req -> ScriptedOpenAi.lastToolResult(req) == null
                    ? Reply.tool("c1", "workspace_exec", Map.of("command", "echo wired"))
                    : Reply.text(ScriptedOpenAi.lastToolResult(req)));
            ChatModel model = openAi.chatModel();
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(CodeExecAutoConfiguration.class))
                    .withPropertyValues("codeexec.backend=local", "codeexec.artifacts.dir=" + dir)
                    .run(ctx -> {
                        CodeExecution codeExecution = ctx.getBean(CodeExecution.class);
                        // tag::wiring[]
                        Assistant assistant = AiServices.builder(Assistant.class)
                                .chatModel(codeExecution.wrap(model))              // the response processor
                                .toolProvider(codeExecution.toolProvider())       // the workspace tools
                                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(50))
                                .build();
                        // end::wiring[]
                        assertThat(assistant.chat("c1", "go")).startsWith("exit_code: 0").contains("wired");
                    });
        }
    }
}
