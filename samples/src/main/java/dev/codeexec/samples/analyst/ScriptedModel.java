package dev.codeexec.samples.analyst;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.github.tomakehurst.wiremock.common.Slf4jNotifier;
import com.github.tomakehurst.wiremock.extension.ResponseDefinitionTransformerV2;
import com.github.tomakehurst.wiremock.http.ResponseDefinition;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The offline model: an OpenAI-compatible chat-completions endpoint on an embedded WireMock server, bound to the
 * loopback interface, whose answers come from {@link AnalystScript}. The chatbot talks to it through the real
 * {@link OpenAiChatModel}, so requests, tool calls and tool results take exactly the path they take with a real
 * model. No API key and no network.
 */
final class ScriptedModel implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MODEL_NAME = "scripted-analyst";

    private final WireMockServer server;
    private final AnalystScript script = new AnalystScript();
    private final AtomicLong ids = new AtomicLong();

    ScriptedModel() {
        server = new WireMockServer(wireMockConfig().bindAddress("127.0.0.1").dynamicPort()
                .disableRequestJournal().notifier(new Slf4jNotifier(false)).extensions(new Responder()));
        server.start();
        server.stubFor(post("/v1/chat/completions").willReturn(aResponse().withTransformers(Responder.NAME)));
    }

    /** The real OpenAI client, pointed at this endpoint. */
    ChatModel chatModel() {
        return OpenAiChatModel.builder().baseUrl(baseUrl()).apiKey("offline-no-key").modelName(MODEL_NAME)
                .maxRetries(0).timeout(Duration.ofSeconds(60)).build();
    }

    /** The loopback address the server listens on (not "localhost", which may resolve to another address first). */
    String baseUrl() {
        return "http://127.0.0.1:" + server.port() + "/v1";
    }

    @Override
    public void close() {
        server.stop();
    }

    /** Answers each request with the script's next message, in the chat-completions format. */
    private final class Responder implements ResponseDefinitionTransformerV2 {
        static final String NAME = "scripted-analyst";

        @Override
        public ResponseDefinition transform(ServeEvent event) {
            try {
                JsonNode request = JSON.readTree(event.getRequest().getBodyAsString());
                return ResponseDefinitionBuilder.responseDefinition().withStatus(200)
                        .withHeader("Content-Type", "application/json")
                        .withBody(completion(script.next(request)).toString()).build();
            } catch (IOException | RuntimeException e) {
                // The client turns this into an exception whose message names the cause.
                return ResponseDefinitionBuilder.responseDefinition().withStatus(500)
                        .withBody("{\"error\":{\"message\":\"the scripted model failed: " + e + "\"}}").build();
            }
        }

        @Override
        public String getName() {
            return NAME;
        }
    }

    private ObjectNode completion(AnalystScript.Reply reply) {
        ObjectNode root = JSON.createObjectNode();
        root.put("id", "chatcmpl-" + ids.incrementAndGet());
        root.put("object", "chat.completion");
        root.put("created", System.currentTimeMillis() / 1000);
        root.put("model", MODEL_NAME);
        ObjectNode choice = root.putArray("choices").addObject();
        choice.put("index", 0);
        ObjectNode message = choice.putObject("message");
        message.put("role", "assistant");
        if (reply.isToolCall()) {
            message.putNull("content");
            ObjectNode call = message.putArray("tool_calls").addObject();
            call.put("id", "call_" + ids.incrementAndGet());
            call.put("type", "function");
            call.putObject("function").put("name", reply.toolName()).put("arguments", reply.args().toString());
            choice.put("finish_reason", "tool_calls");
        } else {
            message.put("content", reply.text());
            choice.put("finish_reason", "stop");
        }
        root.putObject("usage").put("prompt_tokens", 0).put("completion_tokens", 0).put("total_tokens", 0);
        return root;
    }
}
