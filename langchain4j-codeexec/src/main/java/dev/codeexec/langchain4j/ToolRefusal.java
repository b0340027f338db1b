package dev.codeexec.langchain4j;

/**
 * A refusal decided by the tools themselves (no such session, too large, no artifact store, ...), with the error kind
 * its result carries. The message is written for the model and becomes the result text as it is.
 */
final class ToolRefusal extends RuntimeException {

    private final ToolErrorKind kind;

    ToolRefusal(ToolErrorKind kind, String message) {
        super(message, null, false, false);
        this.kind = kind;
    }

    /** The kind of error result, for example {@link ToolErrorKind#TOO_LARGE}. */
    ToolErrorKind kind() {
        return kind;
    }
}
