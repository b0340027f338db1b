package dev.codeexec.langchain4j;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.codeexec.CodeBlock;
import dev.codeexec.CodeBlocks;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.model.output.TokenUsage;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The rule shared by the sync and streaming decorators: a final answer that is exactly one runnable fenced block
 * becomes a call of the code-execution tool, which AiServices then runs like any tool call (with the invocation's
 * workspace, memory, hooks and round-trip limit).
 *
 * <p>Synthetic call ids are {@code call_cb_} plus 24 hex digits: short enough for OpenAI's 40-character limit and in
 * the {@code [A-Za-z0-9_-]} alphabet other providers accept. The prefix is how the RESULT_TO_USER mode recognises the
 * result of its own call without keeping state, so it also works after a restart with persisted memory.
 */
final class CodeBlockPromotion {

    static final String ID_PREFIX = "call_cb_";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SecureRandom RANDOM = new SecureRandom();

    private final CodeBlockMode mode;
    private final String toolName;
    private final int maxRunsPerTurn;
    private final Set<String> languages;

    /**
     * @param languages the fence tags to run (lower case); a lone block in any other language passes through as text
     */
    CodeBlockPromotion(CodeBlockMode mode, String toolName, int maxRunsPerTurn, Set<String> languages) {
        this.mode = mode;
        this.toolName = toolName;
        this.maxRunsPerTurn = maxRunsPerTurn;
        this.languages = Set.copyOf(languages);
    }

    CodeBlockMode mode() {
        return mode;
    }

    /** True when this request may have its answer promoted: the mode is on and the request offers our tool. */
    boolean applies(ChatRequest request) {
        if (mode == CodeBlockMode.OFF) {
            return false;
        }
        List<ToolSpecification> specs = request.toolSpecifications();
        if (specs == null || specs.stream().noneMatch(s -> toolName.equals(s.name()))) {
            return false;
        }
        return runsThisTurn(request.messages()) < maxRunsPerTurn;
    }

    /** The synthetic call for a lone block, or empty when the answer is anything else. */
    Optional<ToolExecutionRequest> promote(AiMessage message) {
        if (message == null || message.hasToolExecutionRequests()) {
            return Optional.empty();
        }
        return CodeBlocks.lone(message.text(), null)
                .filter(b -> languages.contains(b.language().toLowerCase(Locale.ROOT)))
                .map(this::call);
    }

    ChatResponse promoted(ChatResponse original, ToolExecutionRequest call) {
        return original.toBuilder().aiMessage(AiMessage.builder().toolExecutionRequests(List.of(call)).build())
                .build();
    }

    /**
     * In RESULT_TO_USER mode, when the request's last message is the result of our own synthetic call, the answer to
     * send instead of asking the model; otherwise empty.
     */
    Optional<ChatResponse> answerFromOwnResult(ChatRequest request) {
        if (mode != CodeBlockMode.RESULT_TO_USER) {
            return Optional.empty();
        }
        List<ChatMessage> messages = request.messages();
        if (messages.size() < 2 || !(messages.get(messages.size() - 1) instanceof ToolExecutionResultMessage result)
                || !(messages.get(messages.size() - 2) instanceof AiMessage call)) {
            return Optional.empty();
        }
        if (result.id() == null || !result.id().startsWith(ID_PREFIX) || !toolName.equals(result.toolName())
                || call.toolExecutionRequests().size() != 1
                || !result.id().equals(call.toolExecutionRequests().get(0).id())) {
            return Optional.empty();
        }
        return Optional.of(ChatResponse.builder().aiMessage(AiMessage.from(result.text()))
                .finishReason(FinishReason.STOP).tokenUsage(new TokenUsage(0, 0)).build());
    }

    private ToolExecutionRequest call(CodeBlock block) {
        byte[] b = new byte[12];
        RANDOM.nextBytes(b);
        Map<String, String> args = new LinkedHashMap<>();
        args.put("language", block.language());
        args.put("code", block.code());
        try {
            return ToolExecutionRequest.builder().id(ID_PREFIX + HexFormat.of().formatHex(b)).name(toolName)
                    .arguments(JSON.writeValueAsString(args)).build();
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode a code block as JSON", e);
        }
    }

    /** Synthetic calls since the last user message: a model answering code block after code block is stopped. */
    private static int runsThisTurn(List<ChatMessage> messages) {
        int n = 0;
        for (int i = messages.size() - 1; i >= 0; i--) {
            ChatMessage m = messages.get(i);
            if (m instanceof UserMessage) {
                break;
            }
            if (m instanceof AiMessage ai) {
                for (ToolExecutionRequest r : ai.toolExecutionRequests()) {
                    if (r.id() != null && r.id().startsWith(ID_PREFIX)) {
                        n++;
                    }
                }
            }
        }
        return n;
    }
}
