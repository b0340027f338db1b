package dev.codeexec.langchain4j;

/**
 * One step of the tool-call pipeline ({@link ToolPipeline}): it does its part of the call and hands the rest to
 * {@link ToolChain#proceed()}, or answers without proceeding (a refusal). Each step is small and knows only its part.
 */
interface ToolStep {

    /** Does this step's part of the call, usually around {@code chain.proceed()}. */
    ToolResult intercept(ToolChain chain);
}
