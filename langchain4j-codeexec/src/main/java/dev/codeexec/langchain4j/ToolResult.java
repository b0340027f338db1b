package dev.codeexec.langchain4j;

import java.time.Duration;
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
     * The result of a program run, with the attributes every run has: {@code exit_code}, {@code timed_out},
     * {@code truncated}, {@code duration_ms}, and {@code files_changed} when changed files were looked for (with
     * {@code files_changed_complete: false} when there were too many files to compare).
     *
     * @param changed the files the run changed, or null when not reported
     */
    static ToolResult ofRun(String text, int exitCode, boolean timedOut, boolean truncated, Duration duration,
                            ChangedFiles changed) {
        Map<String, Object> attrs = new LinkedHashMap<>();
        attrs.put("exit_code", exitCode);
        attrs.put("timed_out", timedOut);
        attrs.put("truncated", truncated);
        attrs.put("duration_ms", duration.toMillis());
        if (changed != null) {
            attrs.put("files_changed", changed.paths());
            if (!changed.complete()) {
                attrs.put("files_changed_complete", false); // too many files to compare: nothing was checked
            }
        }
        return ok(text, attrs);
    }

    /**
     * An error the model can act on. The text starts with {@code error:} and says what to change; it never carries a
     * stack trace, a host path or an exception class name, and very long paths in it are shortened
     * ({@link ErrorText#forModel}).
     *
     * @param kind what went wrong; its {@linkplain ToolErrorKind#attribute() name} is the {@code error} attribute
     */
    static ToolResult error(ToolErrorKind kind, String message) {
        Map<String, Object> attrs = new LinkedHashMap<>();
        attrs.put("error", kind.attribute());
        return new ToolResult("error: " + ErrorText.forModel(message), true, attrs);
    }
}
