package dev.codeexec.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.ChatRequestOptions;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.ChatResponse;
import java.util.Optional;
import java.util.Set;

/**
 * A {@link ChatModel} that turns a final answer consisting of one runnable fenced block into a call of the
 * code-execution tool (see {@link CodeBlockPromotion}). Everything else passes through unchanged. The delegate's own
 * listeners see the raw answer; this wrapper has none of its own.
 */
final class CodeBlockPromotingChatModel implements ChatModel {

    private final ChatModel delegate;
    private final CodeBlockPromotion promotion;

    CodeBlockPromotingChatModel(ChatModel delegate, CodeBlockPromotion promotion) {
        this.delegate = delegate;
        this.promotion = promotion;
    }

    @Override
    public ChatResponse chat(ChatRequest request) {
        return chat(request, ChatRequestOptions.EMPTY);
    }

    @Override
    public ChatResponse chat(ChatRequest request, ChatRequestOptions options) {
        Optional<ChatResponse> own = promotion.answerFromOwnResult(request);
        if (own.isPresent()) {
            return own.get();
        }
        ChatResponse response = delegate.chat(request, options);
        if (!promotion.applies(request)) {
            return response;
        }
        Optional<ToolExecutionRequest> call = promotion.promote(response.aiMessage());
        return call.map(c -> promotion.promoted(response, c)).orElse(response);
    }

    @Override
    public ChatRequestParameters defaultRequestParameters() {
        return delegate.defaultRequestParameters();
    }

    @Override
    public ModelProvider provider() {
        return delegate.provider();
    }

    @Override
    public Set<Capability> supportedCapabilities() {
        return delegate.supportedCapabilities();
    }

    @Override
    public String toString() {
        return "CodeBlockPromoting(" + promotion.mode() + ", " + delegate + ")";
    }
}
