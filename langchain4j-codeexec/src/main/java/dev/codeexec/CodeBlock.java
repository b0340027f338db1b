package dev.codeexec;

import java.util.Objects;

/**
 * One fenced block of code: its language (the fence's info string, trimmed; may be empty) and its body.
 *
 * @param language the language tag as written by the model, for example {@code python}; never null
 * @param code     the code between the fences; never null
 */
public record CodeBlock(String language, String code) {

    public CodeBlock {
        language = language == null ? "" : language.strip();
        Objects.requireNonNull(code, "code");
    }

    /** A block in the given language. */
    public static CodeBlock of(String language, String code) {
        return new CodeBlock(language, code);
    }
}
