package dev.codeexec.langchain4j;

import java.time.Duration;

/**
 * {@code workspace_kill_session}: stops a background session's whole process tree, returns its last output and forgets
 * the id.
 *
 * <p>Not under the workspace lock, so that it gets through whatever else the conversation is doing, a write to this
 * very session included.
 */
final class KillSessionTool implements ToolHandler {

    /** How long a killed program may take to shut down after SIGTERM before it is killed outright. */
    private static final Duration KILL_GRACE = Duration.ofSeconds(2);

    private final SessionCalls sessions;

    KillSessionTool(SessionCalls sessions) {
        this.sessions = sessions;
    }

    @Override
    public ToolWork prepare(ToolCall call, ToolArguments args) {
        String id = args.requiredString("session_id", "sessionId");
        return ToolWork.alone(() -> kill(call, id));
    }

    private ToolResult kill(ToolCall call, String id) {
        BackgroundSessions.Entry e = sessions.find(call, id);
        boolean wasRunning = e.session.exitCode().isEmpty();
        if (wasRunning) {
            e.session.kill(KILL_GRACE);
        }
        ToolResult r = sessions.poll(e, Duration.ZERO, wasRunning ? "killed" : "exited");
        sessions.remove(e);
        return r;
    }
}
