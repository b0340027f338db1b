package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import dev.codeexec.governance.ApprovalDecision;
import dev.codeexec.governance.ApprovalRequest;
import dev.codeexec.governance.ExecutionAction;
import dev.codeexec.governance.ExecutionApprover;
import dev.codeexec.governance.RunChanges;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link ExecutionApprover} asked about a tool call, by {@link ApprovalStep}: after the handler validated the
 * arguments and before the workspace lock is taken, so that a call waiting for a human holds up nothing but itself.
 *
 * <p>The approver is called on a {@code codeexec-approval-N} thread while the calling thread waits, with a bound and
 * no lock held, so that neither a pending stage nor an approver blocked in {@code review} can hold a call longer than
 * the approval timeout.
 */
final class CallApproval implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(CallApproval.class);

    private final ExecutionApprover approver;
    private final Duration approvalTimeout;
    private final ToolSettings settings;
    private final CommandGate gate;
    private final BiFunction<Engine, String, Optional<Workspace>> existingWorkspace;
    private ExecutorService approvalThreads;

    /**
     * @param approver          the approver, or null to approve everything without asking
     * @param gate              the command policy's gate, or null without a policy
     * @param existingWorkspace the conversation's workspace on an engine, when it exists, without creating it
     */
    CallApproval(ExecutionApprover approver, Duration approvalTimeout, ToolSettings settings, CommandGate gate,
                 BiFunction<Engine, String, Optional<Workspace>> existingWorkspace) {
        this.approver = approver;
        this.approvalTimeout = approvalTimeout;
        this.settings = settings;
        this.gate = gate;
        this.existingWorkspace = existingWorkspace;
    }

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
    @Override
    public synchronized void close() {
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

    /** The action a tool's calls are approved as, or null for tools that need no approval. */
    static ExecutionAction actionOf(WorkspaceTool tool) {
        return switch (tool) {
            case EXEC -> ExecutionAction.RUN_COMMAND;
            case EXECUTE_CODE -> ExecutionAction.EXECUTE_CODE;
            case WRITE_FILE -> ExecutionAction.WRITE_FILE;
            case STAGE_ARTIFACT -> ExecutionAction.STAGE_ARTIFACT;
            case SAVE_ARTIFACT -> ExecutionAction.SAVE_ARTIFACT;
            case SNAPSHOT -> ExecutionAction.SNAPSHOT_WORKSPACE;
            case RESTORE -> ExecutionAction.RESTORE_WORKSPACE;
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
            case SNAPSHOT_WORKSPACE -> b.artifact(SnapshotTool.name(args));
            case RESTORE_WORKSPACE -> {
                Integer version = RestoreTool.version(args);
                b.artifact(SnapshotTool.name(args) + (version == null ? "" : "@" + version)).path(".");
            }
            default -> throw new IllegalStateException("no approval request for " + action);
        }
        return b.build();
    }
}
