package dev.codeexec.langchain4j;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one tool call produced: the text the model reads, whether it is an error, and structured attributes for the
 * application (exit code, duration, files changed). Attribute values are JSON-friendly (strings, numbers, booleans,
 * lists of strings) because LangChain4j stores them in chat memory.
 */
record ToolResult(String text, boolean isError, Map<String, Object> attributes) {

    ToolResult {
        attributes = attributes == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(attributes));
    }

    static ToolResult ok(String text, Map<String, Object> attributes) {
        return new ToolResult(text, false, attributes);
    }

    /**
     * An error the model can act on. The text starts with {@code error:} and says what to change; it never carries a
     * stack trace or a host path.
     */
    static ToolResult error(String kind, String message) {
        Map<String, Object> attrs = new LinkedHashMap<>();
        attrs.put("error", kind);
        return new ToolResult("error: " + message, true, attrs);
    }
}
