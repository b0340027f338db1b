package dev.codeexec.langchain4j;

/**
 * Plans a program run on the workspace: the handler's plan builds the run spec, and the command policy, when set,
 * decides there, on the files the command will execute ({@link CommandSpecs}). A refused command ends the call before
 * any change tracking or run.
 */
final class PolicyStep implements ToolStep {

    @Override
    public ToolResult intercept(ToolChain chain) {
        if (chain.workspace() != null) {
            chain.run(chain.work().plan(chain.workspace()));
        }
        return chain.proceed();
    }
}
