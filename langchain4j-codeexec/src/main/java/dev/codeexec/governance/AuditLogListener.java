package dev.codeexec.governance;

import dev.codeexec.network.EgressEvent;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one SLF4J line per {@link ExecutionEvent}, at INFO, to the logger {@value #LOGGER_NAME} (route it to an
 * audit appender in your logging configuration). Lines are {@code key=value} pairs after the event type, for example:
 *
 * <pre>
 * run_started conversation=c-42 tool=workspace_exec engine=SandboxEngine run=7 action=run_command timeout_ms=60000 command="python3 work/a.py"
 * run_finished conversation=c-42 tool=workspace_exec engine=SandboxEngine run=7 outcome=success exit_code=0 timed_out=false truncated=false duration_ms=412 output_bytes=118
 * refusal conversation=c-42 tool=workspace_exec engine=SandboxEngine kind=approval error=not_approved reason="error: not approved: ..."
 * </pre>
 *
 * <p>What it never writes: file contents, code, standard input, environment variables (names or values), program
 * output. What it does write: ids, paths, sizes, outcomes, the command line the model wrote (cut at
 * {@value #MAX_VALUE_CHARS} characters; leave it out with {@link #withoutCommandLines()}) and the refusal text the
 * model read. Values are quoted when needed and control characters escaped, so one event is always one line.
 *
 * <p>Thread-safe; a failure of the logging backend is the listener's own and never breaks a run.
 */
public final class AuditLogListener implements ExecutionListener {

    /** {@value}: the logger the lines go to unless another is given. */
    public static final String LOGGER_NAME = "dev.codeexec.audit";

    /** {@value}: longer values (command lines, refusal texts) are cut, with an ellipsis. */
    public static final int MAX_VALUE_CHARS = 300;

    private final Logger log;
    private final boolean commandLines;

    private AuditLogListener(Logger log, boolean commandLines) {
        this.log = log;
        this.commandLines = commandLines;
    }

    /** Lines to {@value #LOGGER_NAME}, command lines included. */
    public static AuditLogListener create() {
        return new AuditLogListener(LoggerFactory.getLogger(LOGGER_NAME), true);
    }

    /** Lines to {@code logger}, command lines included. */
    public static AuditLogListener create(Logger logger) {
        return new AuditLogListener(Objects.requireNonNull(logger, "logger"), true);
    }

    /** The same listener without the command lines of runs and sessions (for logs that must not hold them). */
    public AuditLogListener withoutCommandLines() {
        return new AuditLogListener(log, false);
    }

    @Override
    public void onEvent(ExecutionEvent event) {
        if (log.isInfoEnabled()) {
            log.info(format(event));
        }
    }

    /** The line this listener writes for {@code event}. */
    public String format(ExecutionEvent event) {
        Line l = new Line(event.type());
        l.put("conversation", event.conversationId()).put("tool", event.toolName()).put("engine", event.engine());
        if (event instanceof ExecutionEvent.WorkspaceCreated e) {
            l.put("workspace", e.workspaceId());
        } else if (event instanceof ExecutionEvent.WorkspaceClosed e) {
            l.put("workspace", e.workspaceId()).put("reason", lower(e.reason()));
        } else if (event instanceof ExecutionEvent.RunStarted e) {
            l.put("run", e.runId()).put("action", lower(e.action())).put("timeout_ms", millis(e.timeout()));
            if (e.language() != null) {
                l.put("language", e.language()).put("code_chars", e.codeChars());
            }
            if (commandLines) {
                l.put("command", e.commandLine());
            }
        } else if (event instanceof ExecutionEvent.RunFinished e) {
            l.put("run", e.runId()).put("outcome", e.outcome().tag()).put("exit_code", e.exitCode())
                    .put("timed_out", e.timedOut()).put("truncated", e.truncated())
                    .put("duration_ms", millis(e.duration())).put("output_bytes", e.outputBytes())
                    .put("failure", e.failure());
        } else if (event instanceof ExecutionEvent.SessionStarted e) {
            l.put("session", e.sessionId()).put("timeout_ms", millis(e.timeout()));
            if (commandLines) {
                l.put("command", e.commandLine());
            }
        } else if (event instanceof ExecutionEvent.SessionEnded e) {
            l.put("session", e.sessionId()).put("exit_code", e.exitCode()).put("duration_ms", millis(e.duration()));
        } else if (event instanceof ExecutionEvent.FileWritten e) {
            l.put("path", e.path()).put("size_bytes", e.sizeBytes());
        } else if (event instanceof ExecutionEvent.ArtifactSaved e) {
            l.put("path", e.path()).put("artifact", e.artifact()).put("size_bytes", e.sizeBytes());
        } else if (event instanceof ExecutionEvent.Refusal e) {
            l.put("kind", lower(e.kind())).put("error", e.errorKind()).put("reason", e.reason());
        } else if (event instanceof ExecutionEvent.Connection e) {
            EgressEvent c = e.connection();
            l.put("workspace", e.workspaceId()).put("host", c.target().host()).put("port", c.target().port())
                    .put("via", lower(c.target().kind())).put("outcome", lower(c.outcome())).put("rule", c.rule())
                    .put("address", c.address().isEmpty() ? null : c.address()).put("bytes_up", c.bytesUp())
                    .put("bytes_down", c.bytesDown()).put("duration_ms", millis(c.duration()));
            if (!c.outcome().connected()) {
                l.put("reason", c.reason());
            }
        }
        return l.toString();
    }

    private static String lower(Enum<?> e) {
        return e == null ? null : e.name().toLowerCase(java.util.Locale.ROOT);
    }

    private static Long millis(Duration d) {
        return d == null ? null : d.toMillis();
    }

    /** One line of {@code key=value} pairs; null values are left out. */
    private static final class Line {
        private final StringBuilder sb;

        Line(String type) {
            sb = new StringBuilder(type);
        }

        Line put(String key, Object value) {
            if (value != null) {
                sb.append(' ').append(key).append('=').append(quote(String.valueOf(value)));
            }
            return this;
        }

        private static String quote(String v) {
            if (v.length() > MAX_VALUE_CHARS) {
                v = v.substring(0, MAX_VALUE_CHARS) + "...";
            }
            boolean plain = !v.isEmpty();
            StringBuilder out = new StringBuilder(v.length() + 2);
            for (int i = 0; i < v.length(); i++) {
                char c = v.charAt(i);
                if (c == '"' || c == '\\') {
                    out.append('\\').append(c);
                    plain = false;
                } else if (c < 0x20 || c == 0x7f || c == '\u2028' || c == '\u2029') {
                    out.append(String.format("\\u%04x", (int) c));
                    plain = false;
                } else {
                    if (c == ' ' || c == '=') {
                        plain = false;
                    }
                    out.append(c);
                }
            }
            return plain ? out.toString() : "\"" + out + "\"";
        }

        @Override
        public String toString() {
            return sb.toString();
        }
    }
}
