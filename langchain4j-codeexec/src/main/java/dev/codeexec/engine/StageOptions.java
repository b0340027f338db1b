package dev.codeexec.engine;

/**
 * How {@link WorkspaceFS#stageDirectory} places a host directory in a workspace.
 *
 * @param readOnly   make the staged copy read-only for programs (enforced only where
 *                   {@link Capabilities#readOnlyMount()}; elsewhere files are made read-only by mode, which a program
 *                   of the same user can undo)
 * @param allowMount allow a bind mount instead of a copy where the backend supports it (container)
 */
public record StageOptions(boolean readOnly, boolean allowMount) {

    /** A writable copy. */
    public static final StageOptions COPY = new StageOptions(false, false);

    /** A read-only copy. */
    public static final StageOptions READ_ONLY = new StageOptions(true, false);
}
