package dev.codeexec.langchain4j;

/**
 * The last step: does the handler's work. A planned program run starts here (its runs go through {@link ToolCall},
 * which applies the approver's changes and emits the run events) and answers nothing yet: {@link ResultTextStep}
 * writes its text after the change tracking.
 */
final class RunStep implements ToolStep {

    @Override
    public ToolResult intercept(ToolChain chain) {
        if (chain.run() != null) {
            chain.run().start();
            return null;
        }
        return chain.work().doIn(chain.workspace());
    }
}
