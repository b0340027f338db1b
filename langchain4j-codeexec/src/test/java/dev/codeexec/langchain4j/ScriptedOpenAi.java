package dev.codeexec.langchain4j;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.github.tomakehurst.wiremock.extension.ResponseDefinitionTransformerV2;
import com.github.tomakehurst.wiremock.http.ResponseDefinition;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * A fake OpenAI chat-completions endpoint on WireMock whose answers a test scripts in Java: a function from the request
 * body (the real JSON the OpenAI client sent) to a {@link Reply}. Serves plain and streamed (SSE) responses, and records
 * every request for assertions. Public so that the end-to-end tests of other backends (in other modules) can script
 * it too.
 */
public final class ScriptedOpenAi implements AutoCloseable {

    public static final ObjectMapper JSON = new ObjectMapper();

    /** What the fake model answers. */
    public record Reply(String text, List<String[]> toolCalls, List<String> chunks) {

        /** A final text answer. */
        public static Reply text(String text) {
            return new Reply(text, List.of(), null);
        }

        /** A final text answer streamed in the given chunks. */
        public static Reply chunks(String... chunks) {
            return new Reply(String.join("", chunks), List.of(), List.of(chunks));
        }

        /** One tool call; {@code args} is the JSON object of arguments. */
        public static Reply tool(String id, String name, Object args) {
            return new Reply(null, java.util.Collections.singletonList(new String[] {id, name, json(args)}), null);
        }

        public static String json(Object args) {
            try {
                return args instanceof String s ? s : JSON.writeValueAsString(args);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private final WireMockServer server;
    private final List<JsonNode> requests = new CopyOnWriteArrayList<>();
    private volatile Function<JsonNode, Reply> script = r -> Reply.text("(no script)");

    public ScriptedOpenAi() {
        Transformer t = new Transformer();
        server = new WireMockServer(wireMockConfig().dynamicPort().extensions(t));
        server.start();
        server.stubFor(post("/v1/chat/completions").willReturn(aResponse().withTransformers(Transformer.NAME)));
    }

    public void script(Function<JsonNode, Reply> script) {
        this.script = script;
    }

    public List<JsonNode> requests() {
        return new ArrayList<>(requests);
    }

    public void reset() {
        requests.clear();
    }

    public ChatModel chatModel() {
        return OpenAiChatModel.builder().baseUrl(server.baseUrl() + "/v1").apiKey("test").modelName("gpt-4o-mini")
                .maxRetries(0).timeout(Duration.ofSeconds(60)).build();
    }

    public StreamingChatModel streamingChatModel() {
        return OpenAiStreamingChatModel.builder().baseUrl(server.baseUrl() + "/v1").apiKey("test")
                .modelName("gpt-4o-mini").timeout(Duration.ofSeconds(60)).build();
    }

    @Override
    public void close() {
        server.stop();
    }

    // ---- request helpers for scripts

    public static JsonNode last(JsonNode request) {
        JsonNode m = request.path("messages");
        return m.get(m.size() - 1);
    }

    public static String role(JsonNode message) {
        return message.path("role").asText();
    }

    /** The text of a message whose content may be a string or a list of parts. */
    public static String content(JsonNode message) {
        JsonNode c = message.path("content");
        if (c.isTextual()) {
            return c.asText();
        }
        StringBuilder sb = new StringBuilder();
        for (JsonNode part : c) {
            if (part.has("text")) {
                sb.append(part.path("text").asText());
            }
        }
        return sb.toString();
    }

    /** The text of the last user message. */
    public static String lastUser(JsonNode request) {
        JsonNode m = request.path("messages");
        for (int i = m.size() - 1; i >= 0; i--) {
            if (role(m.get(i)).equals("user")) {
                return content(m.get(i));
            }
        }
        return "";
    }

    /** The content of the last message when it is a tool result, else null. */
    public static String lastToolResult(JsonNode request) {
        JsonNode last = last(request);
        return role(last).equals("tool") ? content(last) : null;
    }

    /** Tool results since the last user message. */
    public static int toolResultsThisTurn(JsonNode request) {
        JsonNode m = request.path("messages");
        int n = 0;
        for (int i = m.size() - 1; i >= 0 && !role(m.get(i)).equals("user"); i--) {
            if (role(m.get(i)).equals("tool")) {
                n++;
            }
        }
        return n;
    }

    // ---- responses

    private final class Transformer implements ResponseDefinitionTransformerV2 {
        static final String NAME = "scripted-openai";

        @Override
        public ResponseDefinition transform(ServeEvent event) {
            try {
                JsonNode body = JSON.readTree(event.getRequest().getBodyAsString());
                requests.add(body);
                Reply reply = script.apply(body);
                boolean stream = body.path("stream").asBoolean();
                return ResponseDefinitionBuilder.responseDefinition().withStatus(200)
                        .withHeader("Content-Type", stream ? "text/event-stream" : "application/json")
                        .withBody(stream ? sse(reply) : completion(reply)).build();
            } catch (RuntimeException | java.io.IOException e) {
                return ResponseDefinitionBuilder.responseDefinition().withStatus(500)
                        .withBody("script failed: " + e).build();
            }
        }

        @Override
        public String getName() {
            return NAME;
        }
    }

    private static String completion(Reply r) {
        ObjectNode root = envelope("chat.completion");
        ObjectNode choice = root.putArray("choices").addObject();
        choice.put("index", 0);
        ObjectNode msg = choice.putObject("message");
        msg.put("role", "assistant");
        if (r.toolCalls().isEmpty()) {
            msg.put("content", r.text());
            choice.put("finish_reason", "stop");
        } else {
            msg.putNull("content");
            ArrayNode calls = msg.putArray("tool_calls");
            for (String[] c : r.toolCalls()) {
                ObjectNode call = calls.addObject();
                call.put("id", c[0]);
                call.put("type", "function");
                call.putObject("function").put("name", c[1]).put("arguments", c[2]);
            }
            choice.put("finish_reason", "tool_calls");
        }
        root.putObject("usage").put("prompt_tokens", 10).put("completion_tokens", 5).put("total_tokens", 15);
        return root.toString();
    }

    private static String sse(Reply r) {
        StringBuilder sb = new StringBuilder();
        if (r.toolCalls().isEmpty()) {
            List<String> chunks = r.chunks() != null ? r.chunks() : List.of(r.text());
            boolean first = true;
            for (String c : chunks) {
                ObjectNode delta = JSON.createObjectNode();
                if (first) {
                    delta.put("role", "assistant");
                    first = false;
                }
                delta.put("content", c);
                sb.append(chunk(delta, null));
            }
            sb.append(chunk(JSON.createObjectNode(), "stop"));
        } else {
            int index = 0;
            for (String[] c : r.toolCalls()) {
                ObjectNode delta = JSON.createObjectNode();
                delta.put("role", "assistant");
                delta.putNull("content");
                ObjectNode call = delta.putArray("tool_calls").addObject();
                call.put("index", index);
                call.put("id", c[0]);
                call.put("type", "function");
                call.putObject("function").put("name", c[1]).put("arguments", "");
                sb.append(chunk(delta, null));
                ObjectNode args = JSON.createObjectNode();
                ObjectNode argCall = args.putArray("tool_calls").addObject();
                argCall.put("index", index);
                argCall.putObject("function").put("arguments", c[2]);
                sb.append(chunk(args, null));
                index++;
            }
            sb.append(chunk(JSON.createObjectNode(), "tool_calls"));
        }
        sb.append("data: [DONE]\n\n");
        return sb.toString();
    }

    private static String chunk(ObjectNode delta, String finish) {
        ObjectNode root = envelope("chat.completion.chunk");
        ObjectNode choice = root.putArray("choices").addObject();
        choice.put("index", 0);
        choice.set("delta", delta);
        if (finish != null) {
            choice.put("finish_reason", finish);
        }
        return "data: " + root + "\n\n";
    }

    private static ObjectNode envelope(String object) {
        ObjectNode root = JSON.createObjectNode();
        root.put("id", "chatcmpl-1");
        root.put("object", object);
        root.put("created", 1);
        root.put("model", "gpt-4o-mini");
        return root;
    }
}
