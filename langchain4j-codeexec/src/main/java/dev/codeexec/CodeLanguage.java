package dev.codeexec;

import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The languages a workspace backend can run as a file: each maps a block to a script file and the program that
 * runs it. Backends with a stateful interpreter (Jupyter) may accept more.
 */
public enum CodeLanguage {

    /** {@code python}, {@code py}, {@code python3}: written to {@code code_<n>.py} and run with {@code python3}. */
    PYTHON("py", "python3", 0644, Set.of("python", "py", "python3")),

    /** {@code bash}, {@code sh}, {@code shell}: written to {@code code_<n>.sh} and run with {@code bash}. */
    BASH("sh", "bash", 0755, Set.of("bash", "sh", "shell"));

    private final String fileExtension;
    private final String interpreter;
    private final int fileMode;
    private final Set<String> tags;

    CodeLanguage(String fileExtension, String interpreter, int fileMode, Set<String> tags) {
        this.fileExtension = fileExtension;
        this.interpreter = interpreter;
        this.fileMode = fileMode;
        this.tags = tags;
    }

    /** The language for a fence tag, case-insensitive; empty for unknown or non-executable tags. */
    public static Optional<CodeLanguage> forTag(String tag) {
        if (tag == null) {
            return Optional.empty();
        }
        String t = tag.strip().toLowerCase(Locale.ROOT);
        for (CodeLanguage l : values()) {
            if (l.tags.contains(t)) {
                return Optional.of(l);
            }
        }
        return Optional.empty();
    }

    /** File name extension without the dot. */
    public String fileExtension() {
        return fileExtension;
    }

    /** The program that runs a script of this language, resolved against the run's PATH. */
    public String interpreter() {
        return interpreter;
    }

    /** Unix permission bits for the script file. */
    public int fileMode() {
        return fileMode;
    }

    /** The fence tags that select this language (lower case). */
    public Set<String> tags() {
        return tags;
    }
}
