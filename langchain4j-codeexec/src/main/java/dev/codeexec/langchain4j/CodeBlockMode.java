package dev.codeexec.langchain4j;

/**
 * What the response processor does when a model's final answer, trimmed, is exactly one fenced code block in a
 * runnable language (see {@link dev.codeexec.CodeBlocks#lone}).
 *
 * <p>Whatever the mode, the block only runs when the request advertised the code-execution tool
 * ({@link WorkspaceTool#EXECUTE_CODE} under its configured name): the block becomes a call of that tool, so it runs in
 * the conversation's workspace under the same rules, appears in chat memory as a tool call and its result, and fires
 * the AI service's tool hooks.
 */
public enum CodeBlockMode {

    /** Code blocks are returned to the caller as text, never executed. */
    OFF,

    /**
     * The block is executed and its result is handed back to the model, which then writes the final answer. Costs one
     * more model request per executed block. The default once an engine is configured.
     */
    RESULT_TO_MODEL,

    /**
     * The block is executed and its result text is the final answer, without asking the model again. Memory still
     * holds the tool call, its result and that answer, so the next turn sees what happened.
     */
    RESULT_TO_USER
}
