package dev.codeexec.governance;

import dev.codeexec.network.EgressEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;

/**
 * Something the workspace tools did, for an {@link ExecutionListener}: the workspace's life, runs, background
 * sessions, files written, artifacts saved, refusals. Every event names the conversation, the tool and the engine,
 * and carries no file contents, standard input or environment values.
 *
 * <p>Events cover what the model's tools and the response processor do, and the life of every conversation's
 * workspace. Programs and files of application code ({@code WorkspaceIO}) are the application's own and are not
 * reported, nor approved.
 */
public sealed interface ExecutionEvent {

    /** The conversation (workspace key); null only for a refusal that came before the call had one. */
    String conversationId();

    /**
     * The tool the event belongs to, as the model sees it ({@code workspace_exec}); for a session, the tool that
     * started it. Null when no tool call caused it: a workspace closed or reaped, one created by application code.
     */
    String toolName();

    /** The engine's {@linkplain dev.codeexec.engine.Engine#name() name}. */
    String engine();

    /** When it happened. */
    Instant timestamp();

    /** A short, stable name for logs: {@code run_finished}, {@code refusal}, ... */
    default String type() {
        String simple = getClass().getSimpleName();
        return simple.replaceAll("([a-z])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT);
    }

    /** A conversation's workspace was created (on its first call, after approval). */
    record WorkspaceCreated(String conversationId, String toolName, String engine, Instant timestamp,
                            String workspaceId) implements ExecutionEvent {
    }

    /** A conversation's workspace was removed, with its files. */
    record WorkspaceClosed(String conversationId, String toolName, String engine, Instant timestamp,
                           String workspaceId, Reason reason) implements ExecutionEvent {

        /** Why it went. */
        public enum Reason {
            /** Closed by the application ({@code closeWorkspace}, {@code close}). */
            CLOSED,
            /** Unused for the idle TTL. */
            IDLE,
            /** Found gone (the backend lost it); the next call creates a new one. */
            GONE
        }
    }

    /**
     * A program is about to start: a command of {@code workspace_exec} or a snippet of {@code execute_code}. Always
     * followed by a {@link RunFinished} with the same {@code runId}.
     *
     * @param runId       unique within one {@code CodeExecution}; pairs it with its {@link RunFinished}
     * @param commandLine the command line as the model wrote it ({@link ExecutionAction#RUN_COMMAND}), else null
     * @param language    the snippet's language ({@link ExecutionAction#EXECUTE_CODE}), else null
     * @param codeChars   the snippet's length in characters; 0 for a command
     * @param timeout     the time limit it runs with (after any approver's change)
     */
    record RunStarted(String conversationId, String toolName, String engine, Instant timestamp, long runId,
                      ExecutionAction action, String commandLine, String language, long codeChars,
                      Duration timeout) implements ExecutionEvent {
    }

    /**
     * A run ended.
     *
     * @param exitCode    the exit code; -1 when it {@link RunOutcome#TIMED_OUT timed out} or {@link RunOutcome#FAILED}
     * @param truncated   true when output was cut at the byte cap
     * @param outputBytes bytes of output captured (stdout and stderr, UTF-8), after the cap
     * @param failure     for {@link RunOutcome#FAILED}: why, as the model was told; else null
     */
    record RunFinished(String conversationId, String toolName, String engine, Instant timestamp, long runId,
                       ExecutionAction action, RunOutcome outcome, int exitCode, boolean timedOut,
                       boolean truncated, Duration duration, long outputBytes, String failure)
            implements ExecutionEvent {
    }

    /**
     * A background session started ({@code workspace_exec} with {@code background=true}).
     *
     * @param sessionId the id the model uses for it
     * @param timeout   its life
     */
    record SessionStarted(String conversationId, String toolName, String engine, Instant timestamp,
                          String sessionId, String commandLine, Duration timeout) implements ExecutionEvent {
    }

    /**
     * The tools let go of a background session: it was killed, or it had exited and was reaped, or its conversation
     * was closed.
     *
     * @param exitCode the program's exit code, or null when it was still running and was stopped
     * @param duration since it started
     */
    record SessionEnded(String conversationId, String toolName, String engine, Instant timestamp,
                        String sessionId, Integer exitCode, Duration duration) implements ExecutionEvent {
    }

    /**
     * A file was written by {@code workspace_write_file} or {@code workspace_stage_artifact}.
     *
     * @param sizeBytes the file's size afterwards
     */
    record FileWritten(String conversationId, String toolName, String engine, Instant timestamp, String path,
                       long sizeBytes) implements ExecutionEvent {
    }

    /**
     * A workspace file was saved as an artifact.
     *
     * @param artifact the reference as the model sees it ({@code artifact://report.csv@2}), without the scope prefix
     */
    record ArtifactSaved(String conversationId, String toolName, String engine, Instant timestamp, String path,
                         String artifact, long sizeBytes) implements ExecutionEvent {
    }

    /**
     * A program of the conversation's workspace asked the engine's egress proxy for a connection
     * ({@link dev.codeexec.engine.EgressControl#PROXY}), reported when it ended (a refused one at once): host, port,
     * outcome, rule, bytes each way, duration; never request contents. Delivered on the proxy's threads, not a tool
     * call's, and {@code toolName} is null: the connection belongs to whatever program of the workspace made it.
     *
     * @param workspaceId the workspace whose program made it
     * @param connection  what the proxy decided and carried
     */
    record Connection(String conversationId, String toolName, String engine, Instant timestamp, String workspaceId,
                      EgressEvent connection) implements ExecutionEvent {
    }

    /**
     * A tool call was refused before it ran or changed anything.
     *
     * @param errorKind the {@code error} attribute of the tool result, for example {@code not_approved}
     * @param reason    the result text the model read
     */
    record Refusal(String conversationId, String toolName, String engine, Instant timestamp, RefusalKind kind,
                   String errorKind, String reason) implements ExecutionEvent {
    }
}
