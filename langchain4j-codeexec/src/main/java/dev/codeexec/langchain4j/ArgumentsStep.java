package dev.codeexec.langchain4j;

import java.util.Map;

/**
 * Hands the call to its tool's {@link ToolHandler}, which validates the arguments (a bad argument changes nothing and
 * creates no workspace) and declares the work ({@link ToolWork}).
 */
final class ArgumentsStep implements ToolStep {

    private final Map<WorkspaceTool, ToolHandler> handlers;

    ArgumentsStep(Map<WorkspaceTool, ToolHandler> handlers) {
        this.handlers = handlers;
    }

    @Override
    public ToolResult intercept(ToolChain chain) {
        chain.work(handlers.get(chain.tool()).prepare(chain.call(), chain.args()));
        return chain.proceed();
    }
}
