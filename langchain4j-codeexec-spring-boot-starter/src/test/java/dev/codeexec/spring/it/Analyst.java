package dev.codeexec.spring.it;

import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
import dev.langchain4j.service.spring.AiService;

/** An AI service wired by LangChain4j's own starter: the workspace tools reach it with no code of its own. */
@AiService
public interface Analyst {

    String chat(@MemoryId String conversation, @UserMessage String message);
}
