package dev.codeexec.langchain4j;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import java.time.Duration;

/**
 * {@code workspace_write_stdin}: writes to a background session and polls it.
 *
 * <p>Not under the workspace lock: input to a program touches no file of the workspace, and a program that does not
 * read its input must not hold up the conversation's other calls (the engine bounds the write itself).
 */
final class WriteStdinTool implements ToolHandler {

    private final ToolSettings settings;
    private final SessionCalls sessions;

    WriteStdinTool(ToolSettings settings, SessionCalls sessions) {
        this.settings = settings;
        this.sessions = sessions;
    }

    @Override
    public ToolWork prepare(ToolCall call, ToolArguments args) {
        String id = args.requiredString("session_id", "sessionId");
        String chars = args.string("chars", "input", "text");
        if (chars != null && chars.length() > RunArguments.MAX_STDIN_CHARS) {
            throw new InvalidArgument("'chars' is " + chars.length() + " characters; the limit is "
                    + RunArguments.MAX_STDIN_CHARS + ". Write the input to a file with "
                    + settings.name(WorkspaceTool.WRITE_FILE) + " and let the program read the file");
        }
        Boolean newline = args.bool("append_newline", "submit");
        boolean closeStdin = Boolean.TRUE.equals(args.bool("close_stdin", "eof"));
        Duration yield = RunArguments.yield(args, settings);
        return ToolWork.alone(() -> write(call, id, chars, newline, closeStdin, yield));
    }

    private ToolResult write(ToolCall call, String id, String chars, Boolean newline, boolean closeStdin,
                             Duration yield) {
        BackgroundSessions.Entry e = sessions.find(call, id);
        try {
            if (chars != null && !chars.isEmpty()) {
                e.session.write(chars, newline == null || newline);
            }
            if (closeStdin) {
                e.session.closeStdin();
            }
        } catch (InvalidSpecException ex) {
            // The engine's message names no session, or its own id: give the model the one it knows.
            throw new InvalidSpecException("session " + e.id + ": " + ErrorText.clause(ex.getMessage()) + ".", ex);
        }
        return sessions.poll(e, yield, null);
    }
}
