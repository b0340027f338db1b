package dev.codeexec.langchain4j;

import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.ListedRun;
import dev.codeexec.engine.ListingProgramRunner;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.governance.ExecutionAction;
import dev.codeexec.governance.ExecutionEvent;
import dev.codeexec.governance.ExecutionListener;
import dev.codeexec.governance.RefusalKind;
import dev.codeexec.governance.RunOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link ExecutionEvent}s of tool calls, delivered to the {@link ExecutionListener}s. (The approver is asked by
 * {@link CallApproval}.)
 *
 * <p>Where each event comes from: run events around the engine calls of {@link ToolCall}; refusal, file, artifact and
 * session-start events from the call's result, in {@link EventsStep}; workspace and session-end events from the
 * registries' removal hooks.
 *
 * <p>Thread roles: every method runs on the calling tool's thread; listeners too, synchronously.
 */
final class ToolGovernance {

    private static final Logger log = LoggerFactory.getLogger(ToolGovernance.class);

    /** Which error results are refusals, and of which kind. */
    private static final Map<ToolErrorKind, RefusalKind> REFUSALS = new EnumMap<>(ToolErrorKind.class);

    static {
        REFUSALS.put(ToolErrorKind.POLICY, RefusalKind.POLICY);
        REFUSALS.put(ToolErrorKind.TOOL_DISABLED, RefusalKind.POLICY);
        REFUSALS.put(ToolErrorKind.MEMORY_ID_REQUIRED, RefusalKind.POLICY);
        REFUSALS.put(ToolErrorKind.NOT_APPROVED, RefusalKind.APPROVAL);
        REFUSALS.put(ToolErrorKind.PATH_ESCAPE, RefusalKind.PATH);
        REFUSALS.put(ToolErrorKind.UNSUPPORTED, RefusalKind.CAPABILITY);
    }

    private final List<SafeListener> listeners;
    private final ToolSettings settings;
    private final AtomicLong runIds = new AtomicLong();
    /** The connections of the conversations' programs through their engines' egress proxies. */
    private final EgressReports egress = new EgressReports(this::emit);
    /** Background sessions whose start was reported, by the tools' id: their end is reported once. */
    private final Map<String, Long> sessionStarts = new ConcurrentHashMap<>();

    ToolGovernance(List<ExecutionListener> listeners, ToolSettings settings) {
        List<SafeListener> safe = new ArrayList<>();
        listeners.forEach(l -> safe.add(new SafeListener(l)));
        this.listeners = List.copyOf(safe);
        this.settings = settings;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Runs

    /**
     * Runs a program; when {@code listFolders} is not null and the engine's runner can, the run also lists them when
     * it ends ({@link ListingProgramRunner}). The events see the run's result only.
     */
    ListedRun runProgram(ToolCall call, Workspace ws, RunProgramSpec spec, List<String> listFolders,
                         int maxEntries) {
        if (listeners.isEmpty()) {
            return start(call, ws, spec, listFolders, maxEntries);
        }
        long id = runStarted(call, spec.timeout());
        long start = System.nanoTime();
        ListedRun l;
        try {
            l = start(call, ws, spec, listFolders, maxEntries);
        } catch (RuntimeException e) {
            runFailed(call, id, start, e);
            throw e;
        }
        RunResult r = l.result();
        runFinished(call, id, r.exitCode(), r.timedOut(), r.truncated(), r.duration(),
                (long) OutputWindow.utf8Length(r.stdout()) + OutputWindow.utf8Length(r.stderr()));
        return l;
    }

    private static ListedRun start(ToolCall call, Workspace ws, RunProgramSpec spec, List<String> listFolders,
                                   int maxEntries) {
        ProgramRunner runner = call.engine().runner();
        if (listFolders != null && runner instanceof ListingProgramRunner l) {
            return l.runProgramAndList(ws, spec, listFolders, maxEntries);
        }
        return new ListedRun(runner.runProgram(ws, spec), null);
    }

    CodeExecutionResult executeCode(ToolCall call, Workspace ws, CodeExecutionInput input) {
        if (listeners.isEmpty()) {
            return call.engine().executeCode(ws, input);
        }
        long id = runStarted(call, input.timeout());
        long start = System.nanoTime();
        CodeExecutionResult r;
        try {
            r = call.engine().executeCode(ws, input);
        } catch (RuntimeException e) {
            runFailed(call, id, start, e);
            throw e;
        }
        runFinished(call, id, r.exitCode(), r.timedOut(), r.truncated(), Duration.ofNanos(System.nanoTime() - start),
                OutputWindow.utf8Length(r.output()));
        return r;
    }

    private long runStarted(ToolCall call, Duration timeout) {
        long id = runIds.incrementAndGet();
        ToolArguments args = call.args();
        boolean code = call.tool() == WorkspaceTool.EXECUTE_CODE;
        String codeText = code ? args.string("code", "source") : null;
        emit(new ExecutionEvent.RunStarted(call.key(), settings.name(call.tool()), call.engine().name(), Instant.now(),
                id, code ? ExecutionAction.EXECUTE_CODE : ExecutionAction.RUN_COMMAND,
                code ? null : args.string("command", "cmd"), code ? args.string("language", "lang") : null,
                codeText == null ? 0 : codeText.length(), timeout));
        return id;
    }

    private void runFinished(ToolCall call, long id, int exitCode, boolean timedOut, boolean truncated,
                             Duration duration, long outputBytes) {
        RunOutcome outcome = timedOut ? RunOutcome.TIMED_OUT : exitCode == 0 ? RunOutcome.SUCCESS
                : RunOutcome.NON_ZERO_EXIT;
        emit(new ExecutionEvent.RunFinished(call.key(), settings.name(call.tool()), call.engine().name(),
                Instant.now(), id, CallApproval.actionOf(call.tool()), outcome, timedOut ? -1 : exitCode, timedOut, truncated,
                duration, outputBytes, null));
    }

    private void runFailed(ToolCall call, long id, long startNanos, RuntimeException e) {
        // Messages of the engine's own exceptions are written for the model; others may carry host details.
        String why = e instanceof CodeExecException ? ErrorText.forModel(e.getMessage())
                : "failed unexpectedly (the application log has details)";
        emit(new ExecutionEvent.RunFinished(call.key(), settings.name(call.tool()), call.engine().name(),
                Instant.now(), id, CallApproval.actionOf(call.tool()), RunOutcome.FAILED, -1, false, false,
                Duration.ofNanos(System.nanoTime() - startNanos), 0, why));
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Results, sessions, workspaces

    /**
     * Reports what a finished call did: a refusal, a file written, an artifact saved, a session started.
     *
     * @param call   the call, or null when it failed before it was resolved
     * @param engine the engine it ran on (the configured one when {@code call} is null)
     */
    void afterCall(WorkspaceTool tool, ToolCall call, Engine engine, ToolResult r) {
        if (listeners.isEmpty()) {
            return;
        }
        String key = call == null ? null : call.key();
        String toolName = settings.name(tool);
        Map<String, Object> a = r.attributes();
        if (r.isError()) {
            RefusalKind kind = REFUSALS.get(errorKind(a.get("error")));
            if (kind != null) {
                emit(new ExecutionEvent.Refusal(key, toolName, engine.name(), Instant.now(), kind,
                        String.valueOf(a.get("error")), r.text()));
            }
            return;
        }
        switch (tool) {
            case WRITE_FILE, STAGE_ARTIFACT -> emit(new ExecutionEvent.FileWritten(key, toolName, engine.name(),
                    Instant.now(), String.valueOf(a.get("path")), number(a.get("size_bytes"))));
            case SAVE_ARTIFACT -> emit(new ExecutionEvent.ArtifactSaved(key, toolName, engine.name(), Instant.now(),
                    String.valueOf(a.get("path")), String.valueOf(a.get("artifact")), number(a.get("size_bytes"))));
            // A snapshot is saved as artifacts (its manifest names it), a restore writes the workspace.
            case SNAPSHOT -> emit(new ExecutionEvent.ArtifactSaved(key, toolName, engine.name(), Instant.now(), ".",
                    "snapshot:" + a.get("snapshot"), number(a.get("size_bytes"))));
            case RESTORE -> emit(new ExecutionEvent.FileWritten(key, toolName, engine.name(), Instant.now(), ".",
                    number(a.get("size_bytes"))));
            case EXEC -> {
                Object session = a.get("session_id");
                if (session != null && call != null) {
                    sessionStarts.put(session.toString(), System.nanoTime());
                    emit(new ExecutionEvent.SessionStarted(key, toolName, engine.name(), Instant.now(),
                            session.toString(), call.args().string("command", "cmd"), call.sessionTimeout()));
                }
            }
            default -> {
            }
        }
    }

    /** A background session was let go of (killed, reaped, or its conversation closed). */
    void sessionRemoved(BackgroundSessions.Entry e) {
        Long start = sessionStarts.remove(e.id);
        if (start == null || listeners.isEmpty()) {
            return;
        }
        Integer exit = e.session.exitCode().orElse(null);
        emit(new ExecutionEvent.SessionEnded(e.key, settings.name(WorkspaceTool.EXEC), e.engine.name(), Instant.now(),
                e.id, exit, Duration.ofNanos(System.nanoTime() - start)));
    }

    /** @param toolName the tool whose call created it, or null for application code */
    void workspaceCreated(Engine engine, String key, String toolName, Workspace ws) {
        if (!listeners.isEmpty()) {
            emit(new ExecutionEvent.WorkspaceCreated(key, toolName, engine.name(), Instant.now(), ws.id()));
            egress.workspaceCreated(engine, key, ws);
        }
    }

    void workspaceRemoved(Engine engine, String key, Workspace ws, ExecutionEvent.WorkspaceClosed.Reason reason) {
        if (!listeners.isEmpty()) {
            emit(new ExecutionEvent.WorkspaceClosed(key, null, engine.name(), Instant.now(), ws.id(), reason));
            egress.workspaceRemoved(ws);
        }
    }

    private static ToolErrorKind errorKind(Object attribute) {
        for (ToolErrorKind k : ToolErrorKind.values()) {
            if (k.attribute().equals(attribute)) {
                return k;
            }
        }
        return null;
    }

    private static long number(Object v) {
        return v instanceof Number n ? n.longValue() : -1;
    }

    private void emit(ExecutionEvent event) {
        for (SafeListener l : listeners) {
            l.deliver(event);
        }
    }

    /** Shields the tools from a listener that throws: logged once at WARN, later at DEBUG; it keeps its events. */
    private static final class SafeListener {
        private final ExecutionListener delegate;
        private final AtomicBoolean warned = new AtomicBoolean();

        SafeListener(ExecutionListener delegate) {
            this.delegate = delegate;
        }

        void deliver(ExecutionEvent event) {
            try {
                delegate.onEvent(event);
            } catch (VirtualMachineError e) {
                throw e;
            } catch (RuntimeException | Error e) {
                if (warned.compareAndSet(false, true)) {
                    log.warn("execution listener {} threw on a {} event; the run goes on, and further failures of "
                            + "this listener are logged at DEBUG only", delegate.getClass().getName(), event.type(), e);
                } else {
                    log.debug("execution listener {} threw on a {} event", delegate.getClass().getName(),
                            event.type(), e);
                }
            }
        }
    }
}
