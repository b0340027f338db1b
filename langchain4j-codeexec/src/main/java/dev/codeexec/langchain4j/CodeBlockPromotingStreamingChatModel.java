package dev.codeexec.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.ChatRequestOptions;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.CompleteToolCall;
import dev.langchain4j.model.chat.response.PartialResponse;
import dev.langchain4j.model.chat.response.PartialResponseContext;
import dev.langchain4j.model.chat.response.PartialThinking;
import dev.langchain4j.model.chat.response.PartialThinkingContext;
import dev.langchain4j.model.chat.response.PartialToolCall;
import dev.langchain4j.model.chat.response.PartialToolCallContext;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The streaming twin of {@link CodeBlockPromotingChatModel}. Text is forwarded as it arrives unless the stream, leading
 * whitespace aside, opens with three backticks; only such streams are held back until the answer is complete, then
 * either promoted to a tool call ({@code onCompleteToolCall}, then {@code onCompleteResponse}, which is what AiServices
 * needs to run it, also with concurrent tool execution) or replayed unchanged.
 */
final class CodeBlockPromotingStreamingChatModel implements StreamingChatModel {

    private static final String FENCE = "```";

    private final StreamingChatModel delegate;
    private final CodeBlockPromotion promotion;

    CodeBlockPromotingStreamingChatModel(StreamingChatModel delegate, CodeBlockPromotion promotion) {
        this.delegate = delegate;
        this.promotion = promotion;
    }

    @Override
    public void chat(ChatRequest request, StreamingChatResponseHandler handler) {
        chat(request, ChatRequestOptions.EMPTY, handler);
    }

    @Override
    public void chat(ChatRequest request, ChatRequestOptions options, StreamingChatResponseHandler handler) {
        Optional<ChatResponse> own = promotion.answerFromOwnResult(request);
        if (own.isPresent()) {
            String text = own.get().aiMessage().text();
            if (text != null && !text.isEmpty()) {
                handler.onPartialResponse(text);
            }
            handler.onCompleteResponse(own.get());
            return;
        }
        if (!promotion.applies(request)) {
            delegate.chat(request, options, handler);
            return;
        }
        delegate.chat(request, options, new PromotingHandler(handler));
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

    /** Holds back a stream that may be a lone code block; forwards everything else. */
    private final class PromotingHandler implements StreamingChatResponseHandler {

        private final StreamingChatResponseHandler target;
        private final StringBuilder seen = new StringBuilder();
        private final List<Runnable> held = new ArrayList<>();
        /** null while undecided, TRUE when holding back (fenced start), FALSE when passing through. */
        private Boolean holding;

        PromotingHandler(StreamingChatResponseHandler target) {
            this.target = target;
        }

        private void text(String chunk, Runnable forward) {
            if (holding == Boolean.FALSE) {
                forward.run();
                return;
            }
            seen.append(chunk == null ? "" : chunk);
            held.add(forward);
            String lead = seen.toString().stripLeading();
            if (lead.startsWith(FENCE)) {
                holding = Boolean.TRUE;
            } else if (!lead.isEmpty() && !FENCE.startsWith(lead)) {
                holding = Boolean.FALSE;
                flush();
            }
        }

        private void flush() {
            List<Runnable> copy = new ArrayList<>(held);
            held.clear();
            copy.forEach(Runnable::run);
        }

        @Override
        public void onPartialResponse(String partialResponse) {
            text(partialResponse, () -> target.onPartialResponse(partialResponse));
        }

        @Override
        public void onPartialResponse(PartialResponse partialResponse, PartialResponseContext context) {
            text(partialResponse.text(), () -> target.onPartialResponse(partialResponse, context));
        }

        @Override
        public void onCompleteResponse(ChatResponse response) {
            Optional<ToolExecutionRequest> call = promotion.promote(response.aiMessage());
            if (call.isPresent()) {
                held.clear();
                target.onCompleteToolCall(new CompleteToolCall(0, call.get()));
                target.onCompleteResponse(promotion.promoted(response, call.get()));
                return;
            }
            flush();
            target.onCompleteResponse(response);
        }

        @Override
        public void onError(Throwable error) {
            flush();
            target.onError(error);
        }

        @Override
        public void onPartialThinking(PartialThinking partialThinking) {
            target.onPartialThinking(partialThinking);
        }

        @Override
        public void onPartialThinking(PartialThinking partialThinking, PartialThinkingContext context) {
            target.onPartialThinking(partialThinking, context);
        }

        @Override
        public void onPartialToolCall(PartialToolCall partialToolCall) {
            target.onPartialToolCall(partialToolCall);
        }

        @Override
        public void onPartialToolCall(PartialToolCall partialToolCall, PartialToolCallContext context) {
            target.onPartialToolCall(partialToolCall, context);
        }

        @Override
        public void onCompleteToolCall(CompleteToolCall completeToolCall) {
            target.onCompleteToolCall(completeToolCall);
        }

        @Override
        public void onUnmappedRawEvent(Object rawEvent) {
            target.onUnmappedRawEvent(rawEvent);
        }
    }
}
