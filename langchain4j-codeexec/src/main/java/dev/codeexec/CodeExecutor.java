package dev.codeexec;

/**
 * Runs code blocks and reports their combined output and any output files.
 *
 * <p>A non-zero exit of a block is part of the result ({@link CodeExecutionResult#exitCode()}), not an exception.
 * Exceptions ({@link dev.codeexec.engine.CodeExecException} and its subtypes) mean the code could not be run at all.
 */
public interface CodeExecutor {

    /**
     * Runs the blocks of {@code input} in order, in the workspace named by its execution id (a fresh temporary one
     * when the id is null), and stops at the first block that fails.
     */
    CodeExecutionResult executeCode(CodeExecutionInput input);

    /** The fences this executor recognises in model text. */
    default CodeBlockDelimiter codeBlockDelimiter() {
        return CodeBlockDelimiter.BACKTICKS;
    }
}
