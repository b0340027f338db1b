package dev.codeexec.samples.dropin;

import dev.codeexec.langchain4j.CodeExecution;                                         // +
import dev.codeexec.sandbox.SandboxEngine;                                             // +
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;

public final class HelpDesk implements AutoCloseable {                                 // + implements AutoCloseable

    public interface Assistant {
        String chat(@MemoryId String userId, @UserMessage String message);
    }

    private final SandboxEngine engine = SandboxEngine.create();                       // +
    private final CodeExecution codeExec = CodeExecution.builder().engine(engine).build(); // +
    private final Assistant assistant;

    public HelpDesk(ChatModel model) {
        assistant = AiServices.builder(Assistant.class)
                .chatModel(codeExec.wrap(model))                                       // + was .chatModel(model)
                .toolProvider(codeExec.toolProvider())                                 // +
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(20))
                .build();
    }

    public String answer(String userId, String message) {
        return assistant.chat(userId, message);
    }

    @Override public void close() { codeExec.close(); engine.close(); }              // +
}
