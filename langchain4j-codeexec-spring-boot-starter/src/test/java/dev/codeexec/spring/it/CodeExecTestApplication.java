package dev.codeexec.spring.it;

import dev.codeexec.governance.ApprovalDecision;
import dev.codeexec.governance.ExecutionApprover;
import dev.codeexec.governance.RecordingListener;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ScriptedOpenAi;
import dev.langchain4j.memory.chat.ChatMemoryProvider;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.ChatModel;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * An application as a user writes it: a chat model (the scripted OpenAI endpoint), a chat memory, an approver, a
 * listener and a meter registry as beans, and an {@code @AiService} interface; the starter does the rest.
 */
@SpringBootApplication
public class CodeExecTestApplication {

    @Bean(destroyMethod = "close")
    ScriptedOpenAi scriptedOpenAi() {
        return new ScriptedOpenAi();
    }

    /** The model with the response processor: a lone fenced code block in an answer runs through execute_code. */
    @Bean
    ChatModel chatModel(ScriptedOpenAi openAi, CodeExecution codeExecution) {
        return codeExecution.wrap(openAi.chatModel());
    }

    @Bean
    ChatMemoryProvider chatMemoryProvider() {
        return id -> MessageWindowChatMemory.builder().id(id).maxMessages(50).build();
    }

    /** Denies any command or code that mentions "forbidden", allows everything else. */
    @Bean
    ExecutionApprover approver() {
        return ExecutionApprover.of(r -> r.commandLine().or(r::code).orElse("").contains("forbidden")
                ? ApprovalDecision.deny("commands on forbidden files are not approved") : ApprovalDecision.allow());
    }

    @Bean
    RecordingListener recordingListener() {
        return new RecordingListener();
    }

    @Bean
    SimpleMeterRegistry meterRegistry() {
        return new SimpleMeterRegistry();
    }
}
