package dev.codeexec.langchain4j;

import dev.langchain4j.invocation.InvocationContext;
import java.util.List;
import java.util.Map;

/**
 * The path of every tool call, as one ordered list of steps, each a class of its own that does its part around the
 * rest ({@link ToolStep}, {@link ToolChain}). Read top to bottom, this is the order in which a call is handled:
 *
 * <ol>
 *   <li>{@link EventsStep}: report the call's outcome to the execution listeners (after the rest);</li>
 *   <li>{@link ErrorsStep}: turn whatever the rest throws into an error result;</li>
 *   <li>{@link EnabledStep}: refuse a tool the application did not enable;</li>
 *   <li>{@link ResolveStep}: the engine and the conversation's workspace key;</li>
 *   <li>{@link ArgumentsStep}: the handler validates the arguments and declares its work;</li>
 *   <li>{@link ApprovalStep}: the approver, for work in the workspace, before the lock;</li>
 *   <li>{@link WorkspaceLockStep}: the conversation's workspace, created on first use, under its lock;</li>
 *   <li>{@link AttachmentsStep}: the user's attached files staged, the change tracker told of changes;</li>
 *   <li>{@link PolicyStep}: a program run planned on the workspace, where the command policy decides;</li>
 *   <li>{@link ResultTextStep}: the run's result text (after the run and its tracking);</li>
 *   <li>{@link ChangeTrackingStep}: the files the run changed;</li>
 *   <li>{@link RunStep}: the work itself, the engine's run.</li>
 * </ol>
 *
 * <p>Handlers ({@link ToolHandler}) only validate and declare ({@link ToolWork}): none of them takes a lock, asks the
 * approver or tracks changes itself.
 */
final class ToolPipeline {

    private final List<ToolStep> steps;

    ToolPipeline(List<ToolStep> steps) {
        this.steps = List.copyOf(steps);
    }

    /** The pipeline of the workspace tools: the steps in the order above. */
    static ToolPipeline of(ToolSettings settings, ToolGovernance governance, ToolCallResolver resolver, ToolErrors errors,
                           Map<WorkspaceTool, ToolHandler> handlers, CallApproval approval, ToolWorkspaces workspaces,
                           ChangeTrackers changes) {
        return new ToolPipeline(List.of(
                new EventsStep(governance, resolver),
                new ErrorsStep(errors),
                new EnabledStep(settings),
                new ResolveStep(resolver),
                new ArgumentsStep(handlers),
                new ApprovalStep(approval),
                new WorkspaceLockStep(workspaces),
                new AttachmentsStep(workspaces, changes),
                new PolicyStep(),
                new ResultTextStep(),
                new ChangeTrackingStep(changes),
                new RunStep()));
    }

    /** The steps in the order a call passes them (for tests). */
    List<ToolStep> steps() {
        return steps;
    }

    /** Runs one call through the steps; never throws for anything the model or the engine did. */
    ToolResult call(WorkspaceTool tool, ToolArguments args, InvocationContext ctx) {
        return new ToolChain(steps, tool, args, ctx).proceed();
    }
}
