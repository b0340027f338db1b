package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.codeexec.workspace.snapshot.SnapshotOptions;
import dev.codeexec.workspace.snapshot.WorkspaceSnapshots;

/**
 * Snapshots as the tools, {@link WorkspaceIO} and {@link CodeExecution#fork} use them: in the artifact store of the
 * call ({@link ToolArtifacts}), under the conversation's {@link ArtifactScope} prefix, within the configured bounds.
 */
final class ToolSnapshots {

    private final ToolArtifacts artifacts;
    private final SnapshotOptions options;

    ToolSnapshots(ToolArtifacts artifacts, SnapshotOptions options) {
        this.artifacts = artifacts;
        this.options = options == null ? SnapshotOptions.DEFAULT : options;
    }

    /** What a capture takes and its bounds (also the bounds of a restore). */
    SnapshotOptions options() {
        return options;
    }

    /**
     * The snapshots of conversation {@code key} in the store of calls on {@code engine}.
     *
     * @throws ToolRefusal {@code unsupported} when there is no artifact store
     */
    WorkspaceSnapshots of(Engine engine, String key) {
        return new WorkspaceSnapshots(artifacts.service(engine), artifacts.prefix(key));
    }
}
