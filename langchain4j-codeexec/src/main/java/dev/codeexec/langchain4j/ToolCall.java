package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.langchain4j.data.message.UserMessage;

/**
 * Where one tool call runs: the engine, the conversation's workspace key, and the invocation it belongs to (for
 * staging the user's attached files once per invocation). Built by {@link ToolCallResolver}.
 *
 * @param userMessage  the invocation's user message, or null when the context carries none
 * @param invocationId the invocation's id, or null when the context carries none
 */
record ToolCall(Engine engine, String key, UserMessage userMessage, String invocationId) {
}
