package dev.codeexec.sandbox;

import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.workspace.HostWorkspaceManager;
import java.nio.file.Path;

/**
 * The sandbox engine's workspaces: a host workspace whose tree belongs to the sandbox user, and a cleanup that no
 * program of the workspace can race (its sessions are closed, then its tree is deleted while no run holds its gate),
 * forgetting what the engine remembered of it.
 *
 * @param requireOpen throws when the engine is closed
 * @param egress      the engine's egress proxy, or null
 */
record SandboxWorkspaces(Runnable requireOpen, HostWorkspaceManager manager, SandboxUser user, WorkspaceGates gates,
                         SandboxRunPlanner planner, SandboxWorkspaceFS fs, SandboxEgress egress)
        implements WorkspaceManager {

    @Override
    public Workspace createWorkspace(String execId, WorkspacePolicy policy) {
        requireOpen.run();
        Workspace w = manager.createWorkspace(execId, policy);
        user.claimTree(Path.of(w.path())); // programs write their workspace, as the sandbox user
        return w;
    }

    @Override
    public void cleanup(Workspace workspace) {
        // No program of the workspace may run while its tree is deleted by name.
        for (ProgramSession s : gates.sessions(workspace)) {
            s.close();
        }
        gates.exclusiveRun(workspace, () -> {
            planner.forget(manager.hostPath(workspace)); // what the scans of its tree remembered
            fs.forget(workspace);
            manager.cleanup(workspace);
        });
        gates.forget(workspace);
        if (egress != null) {
            egress.egress().closeWorkspace(workspace.id());
        }
    }
}
