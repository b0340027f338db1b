package dev.codeexec.langchain4j;

/**
 * Reports what a finished call did (a refusal, a file written, an artifact saved, a session started) to the execution
 * listeners, from its result, whatever the later steps answered. Run events come from the run itself ({@link ToolCall}).
 */
final class EventsStep implements ToolStep {

    private final ToolGovernance governance;
    private final ToolCallResolver resolver;

    EventsStep(ToolGovernance governance, ToolCallResolver resolver) {
        this.governance = governance;
        this.resolver = resolver;
    }

    @Override
    public ToolResult intercept(ToolChain chain) {
        ToolResult result = chain.proceed();
        ToolCall call = chain.call();
        governance.afterCall(chain.tool(), call, call != null ? call.engine() : resolver.engine(chain.context()),
                result);
        return result;
    }
}
