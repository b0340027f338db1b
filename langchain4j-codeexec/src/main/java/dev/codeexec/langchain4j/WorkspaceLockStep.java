package dev.codeexec.langchain4j;

/**
 * Takes the conversation's workspace, created on first use, under its lock (one call at a time per workspace) for the
 * rest of the call. Work {@linkplain ToolWork#alone alone} goes on without it.
 */
final class WorkspaceLockStep implements ToolStep {

    private final ToolWorkspaces workspaces;

    WorkspaceLockStep(ToolWorkspaces workspaces) {
        this.workspaces = workspaces;
    }

    @Override
    public ToolResult intercept(ToolChain chain) {
        if (!chain.work().usesWorkspace()) {
            return chain.proceed();
        }
        return workspaces.locked(chain.call(), ws -> {
            chain.workspace(ws);
            return chain.proceed();
        });
    }
}
