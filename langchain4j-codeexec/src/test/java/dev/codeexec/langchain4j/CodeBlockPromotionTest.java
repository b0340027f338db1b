package dev.codeexec.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.CompleteToolCall;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** The decorators on fake models: what is promoted, what passes through, and the stream's hold-back. */
class CodeBlockPromotionTest {

    static final ToolSpecification EXEC = ToolSpecification.builder().name("execute_code").build();
    static final Set<String> LANGS = Set.of("python", "py", "python3", "bash", "sh", "shell");

    private static CodeBlockPromotion promotion(CodeBlockMode mode) {
        return new CodeBlockPromotion(mode, "execute_code", 2, LANGS);
    }

    private static ChatRequest request(List<ChatMessage> messages, ToolSpecification... tools) {
        return ChatRequest.builder().messages(messages).toolSpecifications(List.of(tools)).build();
    }

    private static ChatModel answering(String text) {
        return new ChatModel() {
            @Override
            public ChatResponse doChat(ChatRequest request) {
                return ChatResponse.builder().aiMessage(AiMessage.from(text)).build();
            }
        };
    }

    @Test
    void should_promote_a_lone_block_to_a_call_of_the_execute_tool() {
        ChatModel m = new CodeBlockPromotingChatModel(answering("\n```python\nprint(1)\n```\n"),
                promotion(CodeBlockMode.RESULT_TO_MODEL));

        ChatResponse r = m.chat(request(List.of(UserMessage.from("go")), EXEC));

        assertThat(r.aiMessage().text()).isNull();
        ToolExecutionRequest call = r.aiMessage().toolExecutionRequests().get(0);
        assertThat(call.id()).matches("call_cb_[0-9a-f]{24}");
        assertThat(call.name()).isEqualTo("execute_code");
        assertThat(call.arguments()).isEqualTo("{\"language\":\"python\",\"code\":\"print(1)\"}");
    }

    @ParameterizedTest
    @ValueSource(strings = {"Run this:\n```python\nprint(1)\n```", "```python\nprint(1)\n```\nDone.",
        "```python\na\n```\n```python\nb\n```", "```json\n{\"a\": 1}\n```", "```text\nhi\n```", "```\nls\n```",
        "```rust\nfn main() {}\n```", "no code at all", "```python\nunterminated"})
    void should_pass_anything_else_through_untouched(String answer) {
        ChatModel m = new CodeBlockPromotingChatModel(answering(answer), promotion(CodeBlockMode.RESULT_TO_MODEL));

        ChatResponse r = m.chat(request(List.of(UserMessage.from("go")), EXEC));

        assertThat(r.aiMessage().text()).isEqualTo(answer);
        assertThat(r.aiMessage().hasToolExecutionRequests()).isFalse();
    }

    @Test
    void should_not_promote_when_the_request_does_not_offer_the_execute_tool() {
        ChatModel m = new CodeBlockPromotingChatModel(answering("```python\nprint(1)\n```"),
                promotion(CodeBlockMode.RESULT_TO_MODEL));

        ChatResponse r = m.chat(request(List.of(UserMessage.from("go")),
                ToolSpecification.builder().name("other").build()));

        assertThat(r.aiMessage().hasToolExecutionRequests()).isFalse();
    }

    @Test
    void should_stop_promoting_when_the_turn_reached_its_run_limit() {
        ChatModel m = new CodeBlockPromotingChatModel(answering("```python\nprint(1)\n```"),
                promotion(CodeBlockMode.RESULT_TO_MODEL));
        List<ChatMessage> turn = new ArrayList<>(List.of(UserMessage.from("go")));
        for (int i = 0; i < 2; i++) {
            ToolExecutionRequest call = ToolExecutionRequest.builder().id("call_cb_" + i).name("execute_code")
                    .arguments("{}").build();
            turn.add(AiMessage.from(List.of(call)));
            turn.add(ToolExecutionResultMessage.from(call, "1"));
        }

        ChatResponse r = m.chat(request(turn, EXEC));

        assertThat(r.aiMessage().hasToolExecutionRequests()).as("third block in one turn").isFalse();
    }

    @Test
    void should_answer_from_its_own_result_without_calling_the_model_when_mode_is_result_to_user() {
        List<ChatRequest> seen = new ArrayList<>();
        ChatModel delegate = new ChatModel() {
            @Override
            public ChatResponse doChat(ChatRequest request) {
                seen.add(request);
                return ChatResponse.builder().aiMessage(AiMessage.from("model")).build();
            }
        };
        ChatModel m = new CodeBlockPromotingChatModel(delegate, promotion(CodeBlockMode.RESULT_TO_USER));
        ToolExecutionRequest own = ToolExecutionRequest.builder().id("call_cb_0123").name("execute_code")
                .arguments("{}").build();
        ToolExecutionRequest foreign = ToolExecutionRequest.builder().id("call_xyz").name("execute_code")
                .arguments("{}").build();

        ChatResponse mine = m.chat(request(List.of(UserMessage.from("go"), AiMessage.from(List.of(own)),
                ToolExecutionResultMessage.from(own, "exit_code: 0\n42")), EXEC));
        ChatResponse theirs = m.chat(request(List.of(UserMessage.from("go"), AiMessage.from(List.of(foreign)),
                ToolExecutionResultMessage.from(foreign, "exit_code: 0\n42")), EXEC));

        assertThat(mine.aiMessage().text()).isEqualTo("exit_code: 0\n42");
        assertThat(theirs.aiMessage().text()).as("a call the model made itself goes back to the model")
                .isEqualTo("model");
        assertThat(seen).hasSize(1);
    }

    @Test
    void should_hold_back_a_fenced_stream_and_emit_a_complete_tool_call() {
        List<String> events = new ArrayList<>();
        StreamingChatModel m = new CodeBlockPromotingStreamingChatModel(streaming("  ``", "`py", "thon\nprint(1)\n",
                "```"), promotion(CodeBlockMode.RESULT_TO_MODEL));

        m.chat(request(List.of(UserMessage.from("go")), EXEC), recorder(events));

        assertThat(events).containsExactly("toolCall:execute_code", "complete:tools");
    }

    @Test
    void should_flush_a_held_stream_when_it_is_not_a_lone_block() {
        List<String> events = new ArrayList<>();
        StreamingChatModel m = new CodeBlockPromotingStreamingChatModel(streaming("```python\nx\n```", "\nand prose"),
                promotion(CodeBlockMode.RESULT_TO_MODEL));

        m.chat(request(List.of(UserMessage.from("go")), EXEC), recorder(events));

        assertThat(events).containsExactly("partial:```python\nx\n```", "partial:\nand prose",
                "complete:```python\nx\n```\nand prose");
    }

    @Test
    void should_forward_text_at_once_when_the_stream_does_not_open_with_a_fence() {
        List<String> events = new ArrayList<>();
        List<Integer> deliveredAfterEachChunk = new ArrayList<>();
        StreamingChatModel fake = new StreamingChatModel() {
            @Override
            public void doChat(ChatRequest request, StreamingChatResponseHandler handler) {
                for (String c : List.of(" `", "x` is", " fine")) {
                    handler.onPartialResponse(c);
                    deliveredAfterEachChunk.add(events.size());
                }
                handler.onCompleteResponse(ChatResponse.builder().aiMessage(AiMessage.from(" `x` is fine")).build());
            }
        };
        StreamingChatModel m = new CodeBlockPromotingStreamingChatModel(fake, promotion(CodeBlockMode.RESULT_TO_MODEL));

        m.chat(request(List.of(UserMessage.from("go")), EXEC), recorder(events));

        assertThat(deliveredAfterEachChunk).as("held only while it could still be a fence").containsExactly(0, 2, 3);
        assertThat(events).containsExactly("partial: `", "partial:x` is", "partial: fine", "complete: `x` is fine");
    }

    private static StreamingChatModel streaming(String... chunks) {
        return new StreamingChatModel() {
            @Override
            public void doChat(ChatRequest request, StreamingChatResponseHandler handler) {
                for (String c : chunks) {
                    handler.onPartialResponse(c);
                }
                handler.onCompleteResponse(ChatResponse.builder().aiMessage(AiMessage.from(String.join("", chunks)))
                        .build());
            }
        };
    }

    private static StreamingChatResponseHandler recorder(List<String> events) {
        return new StreamingChatResponseHandler() {
            @Override
            public void onPartialResponse(String p) {
                events.add("partial:" + p);
            }

            @Override
            public void onCompleteToolCall(CompleteToolCall call) {
                events.add("toolCall:" + call.toolExecutionRequest().name());
            }

            @Override
            public void onCompleteResponse(ChatResponse r) {
                events.add("complete:" + (r.aiMessage().hasToolExecutionRequests() ? "tools" : r.aiMessage().text()));
            }

            @Override
            public void onError(Throwable error) {
                events.add("error:" + error);
            }
        };
    }
}
