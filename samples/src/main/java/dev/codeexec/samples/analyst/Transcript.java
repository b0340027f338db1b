package dev.codeexec.samples.analyst;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.service.tool.BeforeToolExecution;
import dev.langchain4j.service.tool.ToolExecution;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Prints each step of a conversation as it happens (the tool calls the model made, their results, code blocks the
 * response processor ran) and keeps them for the caller. Hooked into the AI service with
 * {@code beforeToolExecution} and {@code afterToolExecution}; a tool call that takes a while shows progress.
 */
final class Transcript {

    /** The synthetic tool-call id prefix of a code block promoted by the response processor. */
    private static final String PROMOTED_PREFIX = "call_cb_";
    private static final int MAX_RESULT_LINES = 14;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One tool call and its result. */
    record Step(String tool, String arguments, String result, boolean codeBlock) {
    }

    private final PrintStream out;
    private final List<Step> steps = new CopyOnWriteArrayList<>();
    private volatile Progress progress;

    Transcript(PrintStream out) {
        this.out = out;
    }

    List<Step> steps() {
        return List.copyOf(steps);
    }

    void before(BeforeToolExecution before) {
        ToolExecutionRequest r = before.request();
        int n = steps.size() + 1;
        if (r.id() != null && r.id().startsWith(PROMOTED_PREFIX)) {
            JsonNode args = parse(r.arguments());
            out.printf("  [%d] The answer was one fenced %s block, so the response processor runs it (%s):%n", n,
                    args.path("language").asText("code"), r.name());
            indent(args.path("code").asText(""), "      > ", Integer.MAX_VALUE);
        } else {
            out.printf("  [%d] The model calls %s%s%n", n, r.name(), describe(parse(r.arguments())));
        }
        progress = Progress.of(out, r.name() + " is running");
    }

    void after(ToolExecution done) {
        Progress p = progress;
        if (p != null) {
            p.close();
        }
        ToolExecutionRequest r = done.request();
        steps.add(new Step(r.name(), r.arguments(), done.result(), r.id() != null
                && r.id().startsWith(PROMOTED_PREFIX)));
        indent(done.result() == null ? "(no result)" : done.result(), "      | ", MAX_RESULT_LINES);
    }

    /** The arguments as {@code  key: value} pairs; long texts as their first line and size. */
    private static String describe(JsonNode args) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, JsonNode> e : args.properties()) {
            String v = e.getValue().isTextual() ? e.getValue().asText() : e.getValue().toString();
            List<String> lines = v.lines().toList();
            if (lines.size() > 1 || v.length() > 100) {
                v = (lines.isEmpty() ? "" : lines.get(0)) + " ... (" + lines.size() + " lines, " + v.length()
                        + " characters)";
            }
            sb.append(sb.length() == 0 ? ": " : ", ").append(e.getKey()).append('=').append(v);
        }
        return sb.toString();
    }

    private void indent(String text, String prefix, int maxLines) {
        List<String> lines = new ArrayList<>(text.strip().lines().toList());
        int more = lines.size() - maxLines;
        for (String line : more > 0 ? lines.subList(0, maxLines) : lines) {
            out.println(prefix + line);
        }
        if (more > 0) {
            out.println(prefix + "... " + more + " more lines");
        }
    }

    private static JsonNode parse(String json) {
        try {
            return JSON.readTree(json == null || json.isBlank() ? "{}" : json);
        } catch (IOException e) {
            return JSON.createObjectNode().put("arguments", json);
        }
    }
}
