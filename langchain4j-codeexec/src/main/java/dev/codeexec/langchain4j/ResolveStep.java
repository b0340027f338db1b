package dev.codeexec.langchain4j;

/** Resolves where the call runs: its engine and the conversation's workspace key ({@link ToolCallResolver}). */
final class ResolveStep implements ToolStep {

    private final ToolCallResolver resolver;

    ResolveStep(ToolCallResolver resolver) {
        this.resolver = resolver;
    }

    @Override
    public ToolResult intercept(ToolChain chain) {
        chain.call(resolver.resolve(chain.context(), chain.tool(), chain.args()));
        return chain.proceed();
    }
}
