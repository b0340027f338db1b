package dev.codeexec.langchain4j;

/** Looks at the workspace's files around a program run, for the files it changed ({@link ChangeTrackers}). */
final class ChangeTrackingStep implements ToolStep {

    private final ChangeTrackers changes;

    ChangeTrackingStep(ChangeTrackers changes) {
        this.changes = changes;
    }

    @Override
    public ToolResult intercept(ToolChain chain) {
        if (chain.run() == null) {
            return chain.proceed();
        }
        ChangeTrackers.Tracked<ToolResult> t = changes.tracking(chain.call(), chain.workspace(), chain::proceed);
        chain.changed(t.changed());
        return t.result();
    }
}
