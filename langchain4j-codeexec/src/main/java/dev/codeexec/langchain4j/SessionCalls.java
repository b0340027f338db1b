package dev.codeexec.langchain4j;

import dev.codeexec.engine.InteractiveProgramRunner;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the session tools share: starting a background session within the per-conversation limit, finding a session
 * of the calling conversation, and polling it into a result.
 */
final class SessionCalls {

    private final BackgroundSessions sessions;
    private final ToolSettings settings;

    SessionCalls(BackgroundSessions sessions, ToolSettings settings) {
        this.sessions = sessions;
        this.settings = settings;
    }

    /** Starts a session and waits {@code yield} for its first output; the caller holds the workspace lock. */
    ToolResult start(ToolCall call, Workspace ws, InteractiveProgramRunner runner, RunProgramSpec spec,
                     Duration yield) {
        sessions.reap();
        if (sessions.countFor(call.engine(), call.key()) >= BackgroundSessions.MAX_PER_WORKSPACE) {
            throw new ToolRefusal(ToolErrorKind.TOO_MANY_SESSIONS, "this conversation already has "
                    + BackgroundSessions.MAX_PER_WORKSPACE + " background sessions; stop one with "
                    + settings.name(WorkspaceTool.KILL_SESSION) + " first. Nothing was started.");
        }
        BackgroundSessions.Entry e = sessions.register(call.engine(), call.key(), call.startSession(runner, ws, spec));
        return poll(e, yield, null);
    }

    /**
     * The session {@code id} of the calling conversation.
     *
     * @throws ToolRefusal {@code unknown_session} when it has none by that id
     */
    BackgroundSessions.Entry find(ToolCall call, String id) {
        return sessions.find(call.engine(), call.key(), id).orElseThrow(() -> new ToolRefusal(
                ToolErrorKind.UNKNOWN_SESSION, "there is no background session " + ToolArguments.echo(id)
                        + " in this conversation (it may have been killed or reaped after it exited). Start a new one "
                        + "with " + settings.name(WorkspaceTool.EXEC) + " and background=true."));
    }

    /**
     * New output of a session, waiting up to {@code yield} for it to exit.
     *
     * @param status the status to report instead of running/exited ({@code killed}), or null
     */
    ToolResult poll(BackgroundSessions.Entry e, Duration yield, String status) {
        int window = settings.maxOutputBytes();
        ProgramPoll p;
        synchronized (e) {
            p = yield.isZero() ? e.session.poll(e.offset, window) : e.session.await(yield, e.offset, window);
            e.offset = p.nextOffset();
        }
        boolean maybeMore = OutputWindow.utf8Length(p.output()) >= window;
        Map<String, Object> attrs = new LinkedHashMap<>();
        attrs.put("session_id", e.id);
        attrs.put("running", p.running() && status == null);
        if (p.exitCode() != null) {
            attrs.put("exit_code", p.exitCode());
        }
        attrs.put("timed_out", p.timedOut());
        return ToolResult.ok(ResultText.poll(e.id, p, window, maybeMore, status), attrs);
    }

    /** Forgets a session and closes it. */
    void remove(BackgroundSessions.Entry e) {
        sessions.remove(e);
    }
}
