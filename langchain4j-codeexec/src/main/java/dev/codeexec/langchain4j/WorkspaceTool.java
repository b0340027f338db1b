package dev.codeexec.langchain4j;

/**
 * The tools {@link CodeExecution} offers a model, with their default names. Names can be changed per tool (for the
 * {@link dev.langchain4j.service.tool.ToolProvider} face) with {@link CodeExecution.Builder#toolName}, and any subset can
 * be offered with {@link CodeExecution.Builder#tools}.
 */
public enum WorkspaceTool {

    /** Runs a shell command line in the workspace; optionally starts a background session. */
    EXEC("workspace_exec"),
    /** Writes to (or polls) a background session started by {@link #EXEC}. */
    WRITE_STDIN("workspace_write_stdin"),
    /** Stops a background session. */
    KILL_SESSION("workspace_kill_session"),
    /** Reads a window of a workspace file. */
    READ_FILE("workspace_read_file"),
    /** Creates, overwrites or appends to a workspace file. */
    WRITE_FILE("workspace_write_file"),
    /** Lists a workspace folder or the files matching a glob, with sizes. */
    LIST_FILES("workspace_list_files"),
    /** Runs a code snippet (language + code) with the engine's code executor. */
    EXECUTE_CODE("execute_code"),
    /** Saves a workspace file under {@code work/}, {@code out/} or {@code runs/} as a durable artifact. */
    SAVE_ARTIFACT("workspace_save_artifact"),
    /** Copies a saved artifact into {@code work/inputs/}. */
    STAGE_ARTIFACT("workspace_stage_artifact"),
    /** Captures the workspace's files as a versioned snapshot in the artifact store. */
    SNAPSHOT("workspace_snapshot"),
    /** Restores a snapshot into the workspace and reports what the engine then shows (the receipt). */
    RESTORE("workspace_restore");

    private final String defaultName;

    WorkspaceTool(String defaultName) {
        this.defaultName = defaultName;
    }

    /** The name the model sees unless configured otherwise, for example {@code workspace_exec}. */
    public String defaultName() {
        return defaultName;
    }
}
