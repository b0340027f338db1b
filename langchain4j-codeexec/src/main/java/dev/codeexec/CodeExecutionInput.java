package dev.codeexec;

import java.time.Duration;
import java.util.List;

/**
 * What to execute.
 *
 * @param codeBlocks  the blocks, run in order; at least one
 * @param executionId names the workspace to run in (a conversation id, for example); null means a fresh, temporary
 *                    workspace removed after the run
 * @param timeout     the time limit for each block; null means the executor's default
 */
public record CodeExecutionInput(List<CodeBlock> codeBlocks, String executionId, Duration timeout) {

    public CodeExecutionInput {
        if (codeBlocks == null || codeBlocks.isEmpty()) {
            throw new IllegalArgumentException("codeBlocks must contain at least one block");
        }
        codeBlocks = List.copyOf(codeBlocks);
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw new IllegalArgumentException("timeout (" + timeout + ") must be positive");
        }
    }

    /** One block, a fresh workspace, the default timeout. */
    public static CodeExecutionInput of(CodeBlock block) {
        return new CodeExecutionInput(List.of(block), null, null);
    }

    /** One block in the workspace named by {@code executionId}. */
    public static CodeExecutionInput of(CodeBlock block, String executionId) {
        return new CodeExecutionInput(List.of(block), executionId, null);
    }
}
