package dev.codeexec;

import java.util.Objects;

/**
 * The fences that open and close a code block. The opening fence is followed by the language tag and a newline.
 *
 * @param start the opening fence, for example three backticks
 * @param end   the closing fence
 */
public record CodeBlockDelimiter(String start, String end) {

    /** Markdown's triple backticks, the default of every executor. */
    public static final CodeBlockDelimiter BACKTICKS = new CodeBlockDelimiter("```", "```");

    public CodeBlockDelimiter {
        if (start == null || start.isEmpty()) {
            throw new IllegalArgumentException("start fence must not be empty");
        }
        if (end == null || end.isEmpty()) {
            throw new IllegalArgumentException("end fence must not be empty");
        }
    }

    static CodeBlockDelimiter orDefault(CodeBlockDelimiter d) {
        return Objects.requireNonNullElse(d, BACKTICKS);
    }
}
