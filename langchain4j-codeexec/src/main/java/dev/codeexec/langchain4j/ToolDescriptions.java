package dev.codeexec.langchain4j;

import java.util.Map;

/**
 * What the model reads about each tool. The constants are the {@code @Tool} annotations' texts; the tool provider
 * renders the same texts with the configured tool names, limits and policy.
 */
final class ToolDescriptions {

    static final String LAYOUT = "The workspace belongs to this conversation and keeps its files between calls: "
            + "work/inputs/ holds files the user attached and staged artifacts, work/ is for scripts and scratch "
            + "files, out/ is for results (save them with workspace_save_artifact). ";

    /** {@link #LAYOUT} for an application without an artifact store, where the artifact tools are not offered. */
    static final String LAYOUT_WITHOUT_ARTIFACTS = "The workspace belongs to this conversation and keeps its files "
            + "between calls: work/inputs/ holds files the user attached, work/ is for scripts and scratch files, "
            + "out/ is for results. ";

    static final String EXEC = "Runs a shell command line (bash) in the workspace and returns its output. "
            + LAYOUT
            + "Paths are relative to the workspace root; WORKSPACE_DIR, WORK_DIR, OUTPUT_DIR and RUN_DIR are set. "
            + "The result always states exit_code, timed_out and truncated; long output is cut to its head and tail, "
            + "so write large results to files and read them with workspace_read_file. "
            + "On timeout the command and all its child processes are killed. "
            + "Set background=true to start a long-running or interactive program, then use workspace_write_stdin "
            + "and workspace_kill_session with the returned session_id.";

    static final String POLICY_NOTE = " Commands are checked by a policy: only plain words, quotes, pipes (|), "
            + "&&, || and ; are allowed (no $(), $VAR, backticks, redirections, globs, subshells or shell wrappers), "
            + "and only permitted programs may run.";

    static final String WRITE_STDIN = "Sends text to the standard input of a background session started by "
            + "workspace_exec with background=true, waits briefly, and returns the new output. Send empty chars to "
            + "just read new output.";

    static final String KILL_SESSION = "Stops a background session started by workspace_exec (its whole process "
            + "tree) and returns its last output.";

    static final String READ_FILE = "Reads a text file of the workspace, a window of bytes at a time (offset and "
            + "max_bytes). Says when more follows. Binary files are described, not shown.";

    static final String WRITE_FILE = "Creates or overwrites a file in the workspace (parent folders are created), "
            + "or appends to it with append=true. Put inputs and scripts under work/, results under out/.";

    static final String LIST_FILES = "Lists the files of a workspace folder (recursively) or the files matching a "
            + "glob such as out/**/*.csv, with sizes in bytes. The run history in runs/ is listed only when you list "
            + "runs. " + LAYOUT;

    static final String EXECUTE_CODE = "Runs a code snippet in the workspace and returns its output and the files "
            + "it left in out/. Languages: python and bash (others depending on the backend). The code runs with "
            + "work/ as its current folder; read inputs from inputs/ and write results to ../out/ (or use the "
            + "WORK_DIR and OUTPUT_DIR variables).";

    static final String SAVE_ARTIFACT = "Saves a workspace file under work/, out/ or runs/ as a durable artifact and "
            + "returns its reference artifact://name@version, which stays valid after the workspace is gone.";

    static final String STAGE_ARTIFACT = "Copies a saved artifact (artifact://name or artifact://name@version) into "
            + "the workspace, by default into work/inputs/.";

    static final String SNAPSHOT = "Saves the workspace's files (work/, out/ and home/; runs/ only with "
            + "include_runs=true) as the next version of a named snapshot in the artifact store, and returns "
            + "name@version, the file count and bytes. A snapshot keeps files only: not running programs, not "
            + "variables in memory, not packages installed outside the workspace; links are skipped.";

    static final String RESTORE = "Restores a snapshot taken with workspace_snapshot (name, and version; default the "
            + "latest) into the workspace: its files are written back, files it does not hold are kept. Returns a "
            + "receipt comparing the workspace with the snapshot (missing, changed or extra files) and what a snapshot "
            + "does not carry (programs, variables in memory, installed packages).";

    /** Appended to {@link #EXECUTE_CODE} for an engine whose python blocks run in one interpreter (a kernel). */
    static final String STATEFUL_NOTE = " Python blocks of this conversation run in one interpreter: variables, "
            + "imports and loaded data persist from one block to the next (until the interpreter is restarted or "
            + "stopped after a while unused; a result then says the earlier state is gone).";

    /** Appended to {@link #EXECUTE_CODE} for an engine that starts a fresh process per block. */
    static final String STATELESS_NOTE = " Every block runs in a fresh process: variables do not persist between "
            + "blocks, so keep what later blocks need in files under work/.";

    private ToolDescriptions() {
    }

    static String base(WorkspaceTool tool) {
        return switch (tool) {
            case EXEC -> EXEC;
            case WRITE_STDIN -> WRITE_STDIN;
            case KILL_SESSION -> KILL_SESSION;
            case READ_FILE -> READ_FILE;
            case WRITE_FILE -> WRITE_FILE;
            case LIST_FILES -> LIST_FILES;
            case EXECUTE_CODE -> EXECUTE_CODE;
            case SAVE_ARTIFACT -> SAVE_ARTIFACT;
            case STAGE_ARTIFACT -> STAGE_ARTIFACT;
            case SNAPSHOT -> SNAPSHOT;
            case RESTORE -> RESTORE;
        };
    }

    /**
     * The description with configured names, limits and the policy note.
     *
     * @param artifacts whether the artifact tools are offered too (else the description does not mention them)
     * @param stateful  whether the engine's python blocks keep their state between blocks
     */
    static String render(WorkspaceTool tool, ToolSettings s, boolean policy, boolean artifacts, boolean stateful) {
        String text = base(tool);
        if (!artifacts) {
            text = text.replace(LAYOUT, LAYOUT_WITHOUT_ARTIFACTS);
        }
        if (tool == WorkspaceTool.EXEC) {
            text += " Default time limit " + s.defaultTimeout().toSeconds() + " s, maximum "
                    + s.maxTimeout().toSeconds() + " s.";
            if (policy) {
                text += POLICY_NOTE;
            }
        }
        if (tool == WorkspaceTool.EXECUTE_CODE) {
            text += stateful ? STATEFUL_NOTE : STATELESS_NOTE;
        }
        if (tool == WorkspaceTool.EXECUTE_CODE && policy) {
            text += " A command policy applies: the interpreter must be a permitted program.";
        }
        for (Map.Entry<WorkspaceTool, String> e : s.names().entrySet()) {
            String def = e.getKey().defaultName();
            if (!def.equals(e.getValue())) {
                text = text.replace(def, e.getValue());
            }
        }
        return text;
    }

    /** The paragraph of {@link CodeExecution#workspaceGuidance()}; {@code artifacts}: whether results can be saved. */
    static String guidance(ToolSettings s, boolean artifacts) {
        return "You have a private workspace for this conversation, reachable only through your tools. "
                + "Files the user attaches appear in work/inputs/. Write scripts and scratch files under work/, "
                + "final results under out/"
                + (artifacts ? ", and save results the user should keep with " + s.name(WorkspaceTool.SAVE_ARTIFACT)
                        + ", which returns an artifact:// reference" : "")
                + ". Run commands with " + s.name(WorkspaceTool.EXEC)
                + "; every result states exit_code, timed_out and truncated.";
    }
}
