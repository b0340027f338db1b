package dev.codeexec.langchain4j;

import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.governance.ApprovalDecision;
import dev.codeexec.governance.ApprovalRequest;
import dev.codeexec.governance.ExecutionAction;
import dev.codeexec.governance.ExecutionApprover;
import dev.codeexec.governance.ExecutionEvent;
import dev.codeexec.governance.ExecutionListener;
import dev.codeexec.governance.RefusalKind;
import dev.codeexec.governance.RunChanges;
import dev.codeexec.governance.RunOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The governance of tool calls, in one place: the {@link ExecutionApprover} asked before anything runs or changes,
 * and the {@link ExecutionEvent}s delivered to the {@link ExecutionListener}s.
 *
 * <p>Where each part sits: the approval in {@link ToolCall#review()}, which {@link ToolWorkspaces} calls for every
 * call that reaches a workspace, after the handler validated the arguments and the command policy accepted the
 * command, and before the workspace lock is taken (so that a call waiting for a human holds up nothing but itself);
 * run events around the engine calls of {@link ToolCall}; refusal, file, artifact and session-start events from the
 * call's result in {@link ToolRuntime#call}; workspace and session-end events from the registries' removal hooks.
 *
 * <p>Thread roles: every method runs on the calling tool's thread; listeners too, synchronously. The approver is
 * called on a {@code codeexec-approval-N} thread while the calling thread waits, with a bound and no lock held, so
 * that neither a pending stage nor an approver blocked in {@code review} can hold a call longer than the approval
 * timeout.
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

    private final ExecutionApprover approver;
    private final Duration approvalTimeout;
    private final List<SafeListener> listeners;
    private final ToolSettings settings;
    private final CommandGate gate;
    private final BiFunction<Engine, String, Optional<Workspace>> existingWorkspace;
    private final AtomicLong runIds = new AtomicLong();
    private ExecutorService approvalThreads;
    /** The connections of the conversations' programs through their engines' egress proxies. */
    private final EgressReports egress = new EgressReports(this::emit);
    /** Background sessions whose start was reported, by the tools' id: their end is reported once. */
    private final Map<String, Long> sessionStarts = new ConcurrentHashMap<>();

    /**
     * @param approver          the approver, or null to approve everything without asking
     * @param gate              the command policy's gate, or null without a policy
     * @param existingWorkspace the conversation's workspace on an engine, when it exists, without creating it
     */
    ToolGovernance(ExecutionApprover approver, Duration approvalTimeout, List<ExecutionListener> listeners,
                   ToolSettings settings, CommandGate gate,
                   BiFunction<Engine, String, Optional<Workspace>> existingWorkspace) {
        this.approver = approver;
        this.approvalTimeout = approvalTimeout;
        List<SafeListener> safe = new ArrayList<>();
        listeners.forEach(l -> safe.add(new SafeListener(l)));
        this.listeners = List.copyOf(safe);
        this.settings = settings;
        this.gate = gate;
        this.existingWorkspace = existingWorkspace;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Approval

    /**
     * Asks the approver about a call, waiting at most the approval timeout.
     *
     * @return the changes to apply to the call's runs, or null for none
     * @throws ToolRefusal {@code not_approved} when it is denied, not answered in time, or the approver failed
     */
    RunChanges review(ToolCall call) {
        ExecutionAction action = actionOf(call.tool());
        if (approver == null || action == null) {
            return null;
        }
        ApprovalRequest request = request(call, action);
        ApprovalDecision decision = await(request);
        if (!decision.isAllowed()) {
            throw notApproved(ErrorText.clause(decision.reason().orElse("the approver denied it")));
        }
        RunChanges changes = decision.changes().orElse(null);
        if (changes != null) {
            checkTightens(request, changes);
        }
        return changes;
    }

    /**
     * Asks on an approval thread and waits on the calling one, so that the bound holds even for an approver that
     * blocks inside {@code review} instead of returning a pending stage: on time-out the stage is cancelled and the
     * blocked approval thread interrupted.
     */
    private ApprovalDecision await(ApprovalRequest request) {
        long deadline = System.nanoTime() + approvalTimeout.toNanos();
        Future<CompletionStage<ApprovalDecision>> asked = null;
        CompletableFuture<ApprovalDecision> future = null;
        try {
            asked = approvalThreads().submit(() -> approver.review(request));
            CompletionStage<ApprovalDecision> stage = asked.get(approvalTimeout.toNanos(), TimeUnit.NANOSECONDS);
            if (stage == null) {
                throw new IllegalStateException("the approver returned null instead of a CompletionStage");
            }
            future = stage.toCompletableFuture();
            ApprovalDecision d = future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (d == null) {
                throw new IllegalStateException("the approver decided null");
            }
            return d;
        } catch (TimeoutException e) {
            cancel(asked, future);
            log.warn("{} in conversation '{}': no approval within {}; the call is refused", request.toolName(),
                    request.conversationId(), seconds(approvalTimeout));
            throw notApproved("no approval came within " + seconds(approvalTimeout) + ", so the call was refused");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            cancel(asked, future);
            throw notApproved("the wait for approval was interrupted, so the call was refused");
        } catch (CancellationException e) {
            throw notApproved("the approval was cancelled, so the call was refused");
        } catch (ExecutionException | RuntimeException e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            log.error("{} in conversation '{}': the approver failed; the call is refused", request.toolName(),
                    request.conversationId(), cause);
            throw notApproved("the approval check failed, so the call was refused");
        }
    }

    private static void cancel(Future<?> asked, CompletableFuture<?> answer) {
        if (asked != null) {
            asked.cancel(true);
        }
        if (answer != null) {
            answer.cancel(false);
        }
    }

    /** The threads that call the approver, created with the first approval: daemons, since a wait never outlives its call. */
    private synchronized ExecutorService approvalThreads() {
        if (approvalThreads == null) {
            AtomicLong n = new AtomicLong();
            approvalThreads = Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "codeexec-approval-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        }
        return approvalThreads;
    }

    /** Stops the approval threads; approvals still waiting are interrupted (their calls are denied). */
    synchronized void close() {
        if (approvalThreads != null) {
            approvalThreads.shutdownNow();
        }
    }

    /** Refuses changes that would loosen the call, or that do not apply to it. */
    private void checkTightens(ApprovalRequest request, RunChanges changes) {
        Duration asked = changes.timeout().orElse(null);
        if (asked == null) {
            return;
        }
        if (!request.action().isRun()) {
            log.warn("{}: the approver changed the time limit of a {} call, which runs no program; the call is refused",
                    request.toolName(), request.action());
            throw notApproved("the approver's changes (a time limit) do not apply to this call, so it was refused");
        }
        Duration own = request.timeout().orElseThrow();
        if (asked.compareTo(own) > 0) {
            log.warn("{}: the approver asked to raise the time limit from {} to {}; approvers may only tighten limits, "
                    + "so the call is refused", request.toolName(), own, asked);
            throw notApproved("the approver's changes would raise the time limit from " + seconds(own) + " to "
                    + seconds(asked) + ", and approvals may only tighten limits, so the call was refused");
        }
    }

    private static ToolRefusal notApproved(String why) {
        return new ToolRefusal(ToolErrorKind.NOT_APPROVED, "not approved: " + why
                + ". Nothing was run or changed; do not retry the same call unchanged.");
    }

    private static String seconds(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + " seconds" : ms + " ms";
    }

    private static ExecutionAction actionOf(WorkspaceTool tool) {
        return switch (tool) {
            case EXEC -> ExecutionAction.RUN_COMMAND;
            case EXECUTE_CODE -> ExecutionAction.EXECUTE_CODE;
            case WRITE_FILE -> ExecutionAction.WRITE_FILE;
            case STAGE_ARTIFACT -> ExecutionAction.STAGE_ARTIFACT;
            case SAVE_ARTIFACT -> ExecutionAction.SAVE_ARTIFACT;
            default -> null;
        };
    }

    /**
     * The request for a call whose handler has validated its arguments; the same rules (timeouts, paths, the policy)
     * derive what the approver sees, so it sees what will run.
     */
    private ApprovalRequest request(ToolCall call, ExecutionAction action) {
        ToolArguments args = call.args();
        ApprovalRequest.Builder b = ApprovalRequest.builder(action, settings.name(call.tool()), call.key(),
                call.engine()).workspace(existingWorkspace.apply(call.engine(), call.key()).orElse(null));
        switch (action) {
            case RUN_COMMAND -> {
                String command = args.requiredString("command", "cmd");
                boolean background = Boolean.TRUE.equals(args.bool("background"));
                String stdin = args.string("stdin");
                b.commandLine(command).parsedCommand(gate == null ? null : gate.parse(command))
                        .cwd(ToolPaths.normalize(args.string("cwd", "workdir"), "cwd"))
                        .environmentNames(args.stringMap("env").keySet())
                        .stdinChars(stdin == null ? 0 : stdin.length()).background(background)
                        .timeout(RunArguments.timeout(args, settings, background));
            }
            case EXECUTE_CODE -> b.language(args.requiredString("language", "lang"))
                    .code(args.requiredString("code", "source"))
                    .timeout(RunArguments.timeout(args, settings, false));
            case WRITE_FILE -> {
                String content = args.string("content", "text");
                b.path(ToolPaths.normalizeFile(args.requiredString("path"), "path"))
                        .contentBytes(content == null ? 0 : OutputWindow.utf8Length(content));
            }
            case SAVE_ARTIFACT -> {
                String path = ToolPaths.normalizeFile(args.requiredString("path"), "path");
                b.path(path).artifact(SaveArtifactTool.artifactName(path, args.string("name")));
            }
            case STAGE_ARTIFACT -> {
                String ref = args.requiredString("ref", "artifact", "name").strip();
                b.artifact(ref).path(StageArtifactTool.target(StageArtifactTool.ref(ref), args.string("to", "path")));
            }
            default -> throw new IllegalStateException("no approval request for " + action);
        }
        return b.build();
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Runs

    RunResult runProgram(ToolCall call, Workspace ws, RunProgramSpec spec) {
        if (listeners.isEmpty()) {
            return call.engine().runner().runProgram(ws, spec);
        }
        long id = runStarted(call, spec.timeout());
        long start = System.nanoTime();
        RunResult r;
        try {
            r = call.engine().runner().runProgram(ws, spec);
        } catch (RuntimeException e) {
            runFailed(call, id, start, e);
            throw e;
        }
        runFinished(call, id, r.exitCode(), r.timedOut(), r.truncated(), r.duration(),
                (long) OutputWindow.utf8Length(r.stdout()) + OutputWindow.utf8Length(r.stderr()));
        return r;
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
                Instant.now(), id, actionOf(call.tool()), outcome, timedOut ? -1 : exitCode, timedOut, truncated,
                duration, outputBytes, null));
    }

    private void runFailed(ToolCall call, long id, long startNanos, RuntimeException e) {
        // Messages of the engine's own exceptions are written for the model; others may carry host details.
        String why = e instanceof CodeExecException ? ErrorText.forModel(e.getMessage())
                : "failed unexpectedly (the application log has details)";
        emit(new ExecutionEvent.RunFinished(call.key(), settings.name(call.tool()), call.engine().name(),
                Instant.now(), id, actionOf(call.tool()), RunOutcome.FAILED, -1, false, false,
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
