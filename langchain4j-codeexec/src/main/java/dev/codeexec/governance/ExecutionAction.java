package dev.codeexec.governance;

/**
 * What a tool call is about to do, as an {@link ExecutionApprover} is asked to approve it. Reading files, listing
 * folders, input to and kills of background sessions are not actions that need approval: they neither start a program
 * nor change a file (input goes to a program that was approved when it started).
 */
public enum ExecutionAction {

    /** {@code workspace_exec}: a shell command line, in the foreground or as a background session. */
    RUN_COMMAND,
    /** {@code execute_code}: a code snippet, from the model or from the response processor's lone code block. */
    EXECUTE_CODE,
    /** {@code workspace_write_file}: creates, overwrites or appends to a workspace file. */
    WRITE_FILE,
    /** {@code workspace_stage_artifact}: copies an artifact into a workspace file. */
    STAGE_ARTIFACT,
    /** {@code workspace_save_artifact}: saves a workspace file as a durable artifact. */
    SAVE_ARTIFACT,
    /** {@code workspace_snapshot}: captures the workspace's files as a snapshot in the artifact store. */
    SNAPSHOT_WORKSPACE,
    /** {@code workspace_restore}: writes a snapshot's files into the workspace. */
    RESTORE_WORKSPACE;

    /** True for the actions that start a program: {@link #RUN_COMMAND} and {@link #EXECUTE_CODE}. */
    public boolean isRun() {
        return this == RUN_COMMAND || this == EXECUTE_CODE;
    }
}
