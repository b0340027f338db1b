package dev.codeexec.langchain4j;

/** Turns whatever the later steps throw into an error result for the model ({@link ToolErrors}); never throws. */
final class ErrorsStep implements ToolStep {

    private final ToolErrors errors;

    ErrorsStep(ToolErrors errors) {
        this.errors = errors;
    }

    @Override
    public ToolResult intercept(ToolChain chain) {
        try {
            return chain.proceed();
        } catch (RuntimeException e) {
            return errors.toResult(chain.tool(), chain.call(), e);
        }
    }
}
