package dev.codeexec.tck;

import dev.codeexec.langchain4j.CodeBlockMode;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ScriptedOpenAi;
import static dev.codeexec.langchain4j.ScriptedOpenAi.lastToolResult;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.codeexec.langchain4j.ScriptedOpenAi.Reply;
import dev.codeexec.engine.Engine;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ChatMessageType;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.memory.chat.ChatMemoryProvider;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.Result;
import dev.langchain4j.service.TokenStream;
import dev.langchain4j.service.UserMessage;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The response processor end to end: real AiServices, the OpenAI client against a scripted WireMock endpoint, the
 * engine a subclass supplies through {@link #createEngine()} running the promoted block with python, sync,
 * {@code Result<String>} and {@code TokenStream}. Requirements of the backend are checked by the subclass.
 */
public abstract class AbstractCodeBlockProcessorIT {

    static final String CODE_ANSWER = "```python\nprint(6 * 7)\n```";

    interface Assistant {
        String chat(@MemoryId String conversation, @UserMessage String message);
    }

    interface ResultAssistant {
        Result<String> chat(@MemoryId String conversation, @UserMessage String message);
    }

    interface StreamingAssistant {
        TokenStream chat(@MemoryId String conversation, @UserMessage String message);
    }

    protected static ScriptedOpenAi openAi;
    protected Engine engine;
    protected InMemoryChatMemoryStore store;
    protected ChatMemoryProvider memory;

    /** A fresh engine for one test, closed after it, that runs python code blocks. */
    protected abstract Engine createEngine();

    @BeforeAll
    static void startServer() {
        openAi = new ScriptedOpenAi();
    }

    @AfterAll
    static void stopServer() {
        openAi.close();
    }

    @BeforeEach
    void setUp() {
        engine = createEngine();
        store = new InMemoryChatMemoryStore();
        memory = id -> MessageWindowChatMemory.builder().id(id).maxMessages(40).chatMemoryStore(store).build();
        openAi.reset();
        // The model answers the question with a lone code block, and answers a tool result with a sentence.
        openAi.script(req -> {
            String tool = lastToolResult(req);
            if (tool != null) {
                return Reply.text(tool.contains("42") ? "The answer is 42." : "Something went wrong: " + tool);
            }
            String user = ScriptedOpenAi.lastUser(req);
            if (user.contains("prose")) {
                return Reply.text("Here is the code:\n" + CODE_ANSWER);
            }
            return Reply.chunks("```py", "thon\nprint(6 ", "* 7)\n", "```");
        });
    }

    @AfterEach
    void tearDown() {
        if (engine != null) {
            engine.close();
        }
    }

    private CodeExecution codeExec(CodeBlockMode mode) {
        return CodeExecution.builder().engine(engine).codeBlockMode(mode).build();
    }

    private List<ChatMessageType> memoryTypes(String id) {
        return store.getMessages(id).stream().map(ChatMessage::type).toList();
    }

    @Test
    void should_run_the_block_and_let_the_model_answer_when_mode_is_result_to_model() {
        try (CodeExecution codeExec = codeExec(CodeBlockMode.RESULT_TO_MODEL)) {
            Assistant a = AiServices.builder(Assistant.class).chatModel(codeExec.wrap(openAi.chatModel()))
                    .toolProvider(codeExec.toolProvider()).chatMemoryProvider(memory).build();

            String answer = a.chat("c1", "What is 6 times 7?");

            assertThat(answer).isEqualTo("The answer is 42.");
            assertThat(openAi.requests()).hasSize(2);
            JsonNode second = openAi.requests().get(1);
            JsonNode call = second.path("messages").get(1).path("tool_calls").get(0);
            assertThat(call.path("id").asText()).startsWith("call_cb_").hasSize(32);
            assertThat(call.path("function").path("name").asText()).isEqualTo("execute_code");
            assertThat(ScriptedOpenAi.content(second.path("messages").get(2))).startsWith("exit_code: 0 |")
                    .contains("42");
            assertThat(memoryTypes("c1")).containsExactly(ChatMessageType.USER, ChatMessageType.AI,
                    ChatMessageType.TOOL_EXECUTION_RESULT, ChatMessageType.AI);
            ToolExecutionResultMessage tool = (ToolExecutionResultMessage) store.getMessages("c1").get(2);
            assertThat(tool.attributes()).containsEntry("exit_code", 0);
        }
    }

    @Test
    void should_return_the_execution_result_without_a_second_request_when_mode_is_result_to_user() {
        try (CodeExecution codeExec = codeExec(CodeBlockMode.RESULT_TO_USER)) {
            Assistant a = AiServices.builder(Assistant.class).chatModel(codeExec.wrap(openAi.chatModel()))
                    .toolProvider(codeExec.toolProvider()).chatMemoryProvider(memory).build();

            String answer = a.chat("c1", "What is 6 times 7?");

            assertThat(answer).startsWith("exit_code: 0 | timed_out: false | truncated: false")
                    .contains("--- output ---\n42");
            assertThat(openAi.requests()).hasSize(1);
            assertThat(memoryTypes("c1")).containsExactly(ChatMessageType.USER, ChatMessageType.AI,
                    ChatMessageType.TOOL_EXECUTION_RESULT, ChatMessageType.AI);
            assertThat(((AiMessage) store.getMessages("c1").get(3)).text()).isEqualTo(answer);
        }
    }

    @Test
    void should_return_the_block_as_text_when_the_processor_is_off() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).autoExecuteCodeBlocks(false).build()) {
            Assistant a = AiServices.builder(Assistant.class).chatModel(codeExec.wrap(openAi.chatModel()))
                    .toolProvider(codeExec.toolProvider()).chatMemoryProvider(memory).build();

            String answer = a.chat("c1", "What is 6 times 7?");

            assertThat(answer).isEqualTo(CODE_ANSWER);
            assertThat(openAi.requests()).hasSize(1);
            assertThat(memoryTypes("c1")).containsExactly(ChatMessageType.USER, ChatMessageType.AI);
        }
    }

    @Test
    void should_leave_prose_around_a_block_untouched() {
        try (CodeExecution codeExec = codeExec(CodeBlockMode.RESULT_TO_MODEL)) {
            Assistant a = AiServices.builder(Assistant.class).chatModel(codeExec.wrap(openAi.chatModel()))
                    .toolProvider(codeExec.toolProvider()).chatMemoryProvider(memory).build();

            assertThat(a.chat("c1", "Show me prose and code")).isEqualTo("Here is the code:\n" + CODE_ANSWER);
            assertThat(openAi.requests()).hasSize(1);
        }
    }

    @Test
    void should_work_with_result_return_types() {
        try (CodeExecution codeExec = codeExec(CodeBlockMode.RESULT_TO_MODEL)) {
            ResultAssistant a = AiServices.builder(ResultAssistant.class)
                    .chatModel(codeExec.wrap(openAi.chatModel())).toolProvider(codeExec.toolProvider())
                    .chatMemoryProvider(memory).build();

            Result<String> r = a.chat("c1", "What is 6 times 7?");

            assertThat(r.content()).isEqualTo("The answer is 42.");
            assertThat(r.toolExecutions()).hasSize(1);
            assertThat(r.toolExecutions().get(0).request().name()).isEqualTo("execute_code");
            assertThat(r.toolExecutions().get(0).result()).contains("42");
        }
    }

    @ParameterizedTest
    @EnumSource(value = CodeBlockMode.class)
    void should_stream_in_every_mode(CodeBlockMode mode) throws Exception {
        streamAndCheck(mode, false);
    }

    @ParameterizedTest
    @EnumSource(value = CodeBlockMode.class, names = {"RESULT_TO_MODEL", "RESULT_TO_USER"})
    void should_stream_when_tools_run_concurrently(CodeBlockMode mode) throws Exception {
        streamAndCheck(mode, true);
    }

    private void streamAndCheck(CodeBlockMode mode, boolean concurrent) throws Exception {
        try (CodeExecution codeExec = codeExec(mode)) {
            AiServices<StreamingAssistant> builder = AiServices.builder(StreamingAssistant.class)
                    .streamingChatModel(codeExec.wrap(openAi.streamingChatModel()))
                    .toolProvider(codeExec.toolProvider()).chatMemoryProvider(memory);
            if (concurrent) {
                builder.executeToolsConcurrently();
            }
            StreamingAssistant a = builder.build();
            List<String> partials = new CopyOnWriteArrayList<>();
            List<String> executed = new CopyOnWriteArrayList<>();
            CompletableFuture<ChatResponse> done = new CompletableFuture<>();

            a.chat("s1", "What is 6 times 7?").onPartialResponse(partials::add)
                    .onToolExecuted(t -> executed.add(t.request().name()))
                    .onCompleteResponse(done::complete).onError(done::completeExceptionally).start();
            ChatResponse response = done.get(60, TimeUnit.SECONDS);

            switch (mode) {
                case OFF -> {
                    assertThat(String.join("", partials)).isEqualTo(CODE_ANSWER);
                    assertThat(response.aiMessage().text()).isEqualTo(CODE_ANSWER);
                    assertThat(executed).isEmpty();
                    assertThat(memoryTypes("s1")).containsExactly(ChatMessageType.USER, ChatMessageType.AI);
                }
                case RESULT_TO_MODEL -> {
                    assertThat(String.join("", partials)).as("the held-back block is never streamed")
                            .isEqualTo("The answer is 42.");
                    assertThat(response.aiMessage().text()).isEqualTo("The answer is 42.");
                    assertThat(executed).containsExactly("execute_code");
                    assertThat(openAi.requests()).hasSize(2);
                    assertThat(memoryTypes("s1")).containsExactly(ChatMessageType.USER, ChatMessageType.AI,
                            ChatMessageType.TOOL_EXECUTION_RESULT, ChatMessageType.AI);
                }
                case RESULT_TO_USER -> {
                    assertThat(String.join("", partials)).startsWith("exit_code: 0").contains("42");
                    assertThat(response.aiMessage().text()).isEqualTo(String.join("", partials));
                    assertThat(executed).containsExactly("execute_code");
                    assertThat(openAi.requests()).hasSize(1);
                    assertThat(memoryTypes("s1")).containsExactly(ChatMessageType.USER, ChatMessageType.AI,
                            ChatMessageType.TOOL_EXECUTION_RESULT, ChatMessageType.AI);
                }
                default -> throw new IllegalStateException();
            }
        }
    }

    @Test
    void should_stream_ordinary_text_as_it_arrives() throws Exception {
        openAi.script(req -> Reply.chunks("  Hello", ", world", "!"));
        try (CodeExecution codeExec = codeExec(CodeBlockMode.RESULT_TO_MODEL)) {
            StreamingAssistant a = AiServices.builder(StreamingAssistant.class)
                    .streamingChatModel(codeExec.wrap(openAi.streamingChatModel()))
                    .toolProvider(codeExec.toolProvider()).chatMemoryProvider(memory).build();
            List<String> partials = new CopyOnWriteArrayList<>();
            CompletableFuture<ChatResponse> done = new CompletableFuture<>();

            a.chat("s2", "hi").onPartialResponse(partials::add).onCompleteResponse(done::complete)
                    .onError(done::completeExceptionally).start();
            done.get(60, TimeUnit.SECONDS);

            assertThat(partials).containsExactly("  Hello", ", world", "!");
        }
    }
}
