package dev.codeexec.langchain4j;

/**
 * A refusal decided by the tools themselves (no such session, too large, no artifact store, ...), with the error kind
 * its result carries. The message is written for the model and becomes the result text as it is.
 */
final class ToolRefusal extends RuntimeException {

    private final String kind;

    ToolRefusal(String kind, String message) {
        super(message, null, false, false);
        this.kind = kind;
    }

    /** The {@code error} attribute of the result, for example {@code too_large}. */
    String kind() {
        return kind;
    }
}
