package dev.codeexec.langchain4j;

import java.util.Locale;

/**
 * What went wrong in a tool call, as the {@code error} attribute of its result names it ({@link #attribute()}): the
 * machine-readable half of an error result, for applications that read attributes. Each constant says what the model
 * is told to do. The table in {@code docs/tools.md} lists every one of them.
 */
enum ToolErrorKind {

    /** A missing, malformed or out-of-range argument: fix the arguments. */
    INVALID_ARGUMENT,
    /** The tool is not enabled in this application. */
    TOOL_DISABLED,
    /** The application requires a conversation id and the call has none. */
    MEMORY_ID_REQUIRED,
    /** A path leaves the workspace (through a link, or as given): use a path inside it. */
    PATH_ESCAPE,
    /** A configured policy refused the request: do not retry it unchanged. */
    POLICY,
    /** The application's approver did not approve the call (denied, no answer in time, or it failed). */
    NOT_APPROVED,
    /** A background session of the workspace holds it: poll or kill the session, then retry. */
    BUSY,
    /** The engine or application cannot do it (no sessions, no clean environment, no artifact store). */
    UNSUPPORTED,
    /** No background session by that id in this conversation. */
    UNKNOWN_SESSION,
    /** The conversation holds as many background sessions as it may. */
    TOO_MANY_SESSIONS,
    /** A file or artifact over the configured size limit. */
    TOO_LARGE,
    /** No artifact by that name (or version) in the conversation's scope. */
    NOT_FOUND,
    /** The engine refused the request as malformed (a missing file, a directory where a file is needed). */
    INVALID_REQUEST,
    /** The conversation's workspace was removed; files written earlier are lost. */
    WORKSPACE_GONE,
    /** The workspace's disk quota is used up: delete files under work/ or out/, then retry. */
    WORKSPACE_FULL,
    /** The program started, then the connection to the backend broke: its outcome is unknown; look before retrying. */
    OUTCOME_UNKNOWN,
    /** The backend is missing or broken; try later. */
    BACKEND_UNAVAILABLE,
    /** The engine could not do it for another reason, which the text gives. */
    FAILED,
    /** An unexpected failure: logged for the application, shown to the model only as such. */
    INTERNAL;

    /** The value of the {@code error} attribute, for example {@code path_escape}. */
    String attribute() {
        return name().toLowerCase(Locale.ROOT);
    }
}
