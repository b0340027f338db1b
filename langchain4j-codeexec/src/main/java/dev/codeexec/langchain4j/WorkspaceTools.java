package dev.codeexec.langchain4j;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.invocation.InvocationContext;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The workspace tools as {@code @Tool} methods, for {@code AiServices.builder(...).tools(workspaceTools)} and for
 * frameworks that discover {@code @Tool} beans. Obtain it from {@link CodeExecution#tools()}.
 *
 * <p><b>Warning:</b> these tools run model-written commands. What they can reach is decided by the engine: the local
 * engine runs them as the host user, with no isolation. Use a sandboxed or container engine, a command policy, or both
 * for anything but trusted experiments.
 *
 * <p>Each call runs in the workspace of the calling conversation: the AI service's {@code @MemoryId}, or the
 * {@link CodeExecution#WORKSPACE_ID_PARAMETER} invocation parameter when set. Results are plain text for the model;
 * failures come back as text starting with {@code error:}, never as exceptions. Arguments of the wrong JSON type are
 * rejected by LangChain4j before these methods run; register {@link CodeExecution#toolArgumentsErrorHandler()} so that
 * the model gets a readable message instead of a failed call, or use {@link CodeExecution#toolProvider()}, which
 * validates arguments itself, sets {@code isError} and attributes, and lets you rename tools.
 *
 * <p>These methods have the default tool names ({@link WorkspaceTool#defaultName()}); a tool not enabled in the builder
 * answers that it is disabled.
 */
public final class WorkspaceTools {

    private final ToolRuntime runtime;

    WorkspaceTools(ToolRuntime runtime) {
        this.runtime = runtime;
    }

    private String call(WorkspaceTool tool, Map<String, Object> args, InvocationContext ctx) {
        return runtime.call(tool, new ToolArguments(args), ctx).text();
    }

    private static Map<String, Object> args(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            if (kv[i + 1] != null) {
                m.put((String) kv[i], kv[i + 1]);
            }
        }
        return m;
    }

    /**
     * Runs a shell command line in the conversation's workspace ({@code workspace_exec}).
     *
     * @return the exit code, timed-out and truncation flags, output (head and tail when long) and changed files
     */
    @Tool(name = "workspace_exec", value = ToolDescriptions.EXEC)
    public String workspaceExec(
            @P(name = "command", description = "The command line, for example: python3 work/analyse.py") String command,
            @P(name = "cwd", description = "Working folder relative to the workspace root, for example work. "
                    + "Default: the workspace root.", required = false) String cwd,
            @P(name = "env", description = "Extra environment variables for this command, as an object of strings.",
                    required = false) Map<String, String> env,
            @P(name = "stdin", description = "Text fed to the command's standard input.", required = false)
            String stdin,
            @P(name = "timeout_seconds", description = "Time limit in seconds; the application sets the default and "
                    + "the maximum.", required = false) Integer timeoutSeconds,
            @P(name = "background", description = "Start the command as a background session and return at once "
                    + "with a session_id.", required = false) Boolean background,
            InvocationContext context) {
        return call(WorkspaceTool.EXEC, args("command", command, "cwd", cwd, "env", env, "stdin", stdin,
                "timeout_seconds", timeoutSeconds, "background", background), context);
    }

    /** Sends input to a background session and returns its new output ({@code workspace_write_stdin}). */
    @Tool(name = "workspace_write_stdin", value = ToolDescriptions.WRITE_STDIN)
    public String workspaceWriteStdin(
            @P(name = "session_id", description = "The session_id returned by workspace_exec.") String sessionId,
            @P(name = "chars", description = "Text to send; empty to just read new output.", required = false)
            String chars,
            @P(name = "append_newline", description = "Send a newline after the text (default true).",
                    required = false) Boolean appendNewline,
            @P(name = "close_stdin", description = "Close standard input after sending (end of file).",
                    required = false) Boolean closeStdin,
            @P(name = "yield_ms", description = "How long to wait for output, in milliseconds.", required = false)
            Integer yieldMs,
            InvocationContext context) {
        return call(WorkspaceTool.WRITE_STDIN, args("session_id", sessionId, "chars", chars, "append_newline",
                appendNewline, "close_stdin", closeStdin, "yield_ms", yieldMs), context);
    }

    /** Stops a background session ({@code workspace_kill_session}). */
    @Tool(name = "workspace_kill_session", value = ToolDescriptions.KILL_SESSION)
    public String workspaceKillSession(
            @P(name = "session_id", description = "The session_id returned by workspace_exec.") String sessionId,
            InvocationContext context) {
        return call(WorkspaceTool.KILL_SESSION, args("session_id", sessionId), context);
    }

    /** Reads a window of a workspace file ({@code workspace_read_file}). */
    @Tool(name = "workspace_read_file", value = ToolDescriptions.READ_FILE)
    public String workspaceReadFile(
            @P(name = "path", description = "File path relative to the workspace root, for example out/report.txt.")
            String path,
            @P(name = "offset", description = "First byte to read (default 0).", required = false) Long offset,
            @P(name = "max_bytes", description = "Most bytes to read.", required = false) Integer maxBytes,
            InvocationContext context) {
        return call(WorkspaceTool.READ_FILE, args("path", path, "offset", offset, "max_bytes", maxBytes), context);
    }

    /** Creates, overwrites or appends to a workspace file ({@code workspace_write_file}). */
    @Tool(name = "workspace_write_file", value = ToolDescriptions.WRITE_FILE)
    public String workspaceWriteFile(
            @P(name = "path", description = "File path relative to the workspace root, for example work/data.csv.")
            String path,
            @P(name = "content", description = "The text to write.") String content,
            @P(name = "append", description = "Append instead of overwriting (default false).", required = false)
            Boolean append,
            InvocationContext context) {
        return call(WorkspaceTool.WRITE_FILE, args("path", path, "content", content, "append", append), context);
    }

    /** Lists a folder or the files matching a glob ({@code workspace_list_files}). */
    @Tool(name = "workspace_list_files", value = ToolDescriptions.LIST_FILES)
    public String workspaceListFiles(
            @P(name = "path", description = "A folder (default: the workspace root) or a glob such as out/**/*.png.",
                    required = false) String path,
            InvocationContext context) {
        return call(WorkspaceTool.LIST_FILES, args("path", path), context);
    }

    /** Runs a code snippet ({@code execute_code}). */
    @Tool(name = "execute_code", value = ToolDescriptions.EXECUTE_CODE)
    public String executeCode(
            @P(name = "language", description = "python or bash.") String language,
            @P(name = "code", description = "The code to run.") String code,
            @P(name = "timeout_seconds", description = "Time limit in seconds; the application sets the default and "
                    + "the maximum.", required = false) Integer timeoutSeconds,
            InvocationContext context) {
        return call(WorkspaceTool.EXECUTE_CODE, args("language", language, "code", code, "timeout_seconds",
                timeoutSeconds), context);
    }

    /** Saves a workspace file as an artifact ({@code workspace_save_artifact}). */
    @Tool(name = "workspace_save_artifact", value = ToolDescriptions.SAVE_ARTIFACT)
    public String workspaceSaveArtifact(
            @P(name = "path", description = "A file under work/, out/ or runs/, for example out/summary.csv.")
            String path,
            @P(name = "name", description = "Artifact name (default: the file name).", required = false) String name,
            InvocationContext context) {
        return call(WorkspaceTool.SAVE_ARTIFACT, args("path", path, "name", name), context);
    }

    /** Captures the workspace as a snapshot ({@code workspace_snapshot}). */
    @Tool(name = "workspace_snapshot", value = ToolDescriptions.SNAPSHOT)
    public String workspaceSnapshot(
            @P(name = "name", description = "Snapshot name, for example before-cleanup (default: workspace).",
                    required = false) String name,
            @P(name = "include_runs", description = "Also capture runs/, the run history (default false).",
                    required = false) Boolean includeRuns,
            InvocationContext context) {
        return call(WorkspaceTool.SNAPSHOT, args("name", name, "include_runs", includeRuns), context);
    }

    /** Restores a snapshot into the workspace ({@code workspace_restore}). */
    @Tool(name = "workspace_restore", value = ToolDescriptions.RESTORE)
    public String workspaceRestore(
            @P(name = "name", description = "Snapshot name (default: workspace).", required = false) String name,
            @P(name = "version", description = "Snapshot version (default: the latest).", required = false)
            Integer version,
            InvocationContext context) {
        return call(WorkspaceTool.RESTORE, args("name", name, "version", version), context);
    }

    /** Copies an artifact into the workspace ({@code workspace_stage_artifact}). */
    @Tool(name = "workspace_stage_artifact", value = ToolDescriptions.STAGE_ARTIFACT)
    public String workspaceStageArtifact(
            @P(name = "ref", description = "artifact://name or artifact://name@version.") String ref,
            @P(name = "to", description = "Destination under work/ (default work/inputs/<name>).", required = false)
            String to,
            InvocationContext context) {
        return call(WorkspaceTool.STAGE_ARTIFACT, args("ref", ref, "to", to), context);
    }
}
