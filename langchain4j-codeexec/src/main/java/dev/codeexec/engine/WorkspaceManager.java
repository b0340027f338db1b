package dev.codeexec.engine;

/** Creates and removes workspaces of one engine. */
public interface WorkspaceManager {

    /**
     * Creates a fresh workspace with the standard layout.
     *
     * @param execId a caller's label for the workspace (a conversation id, for example); it is sanitised into the
     *               workspace id and never used as a path as is
     * @param policy how to create it; {@link WorkspacePolicy#DEFAULT} for no limits
     * @throws UnsupportedCapabilityException when the policy asks for something the engine cannot enforce
     */
    Workspace createWorkspace(String execId, WorkspacePolicy policy);

    /** Removes the workspace and everything in it. Idempotent: cleaning up a gone workspace does nothing. */
    void cleanup(Workspace workspace);
}
