package dev.codeexec.langchain4j;

import dev.codeexec.engine.Workspace;
import dev.langchain4j.invocation.InvocationContext;
import java.util.List;

/**
 * A tool call on its way through the {@link ToolPipeline}: the steps still to come, and what the earlier steps found
 * out (the resolved call, the handler's declared work, the workspace, the planned run and the files it changed). One
 * chain per call, used on the calling thread only.
 */
final class ToolChain {

    private final List<ToolStep> steps;
    private final WorkspaceTool tool;
    private final ToolArguments args;
    private final InvocationContext context;
    private int next;
    private ToolCall call;
    private ToolWork work;
    private Workspace workspace;
    private ToolWork.Run<?> run;
    private ChangedFiles changed;

    ToolChain(List<ToolStep> steps, WorkspaceTool tool, ToolArguments args, InvocationContext context) {
        this.steps = steps;
        this.tool = tool;
        this.args = args;
        this.context = context;
    }

    /** Hands the call to the next step; the last step does not call this. */
    ToolResult proceed() {
        if (next >= steps.size()) {
            throw new IllegalStateException("the last step of the pipeline proceeded");
        }
        return steps.get(next++).intercept(this);
    }

    WorkspaceTool tool() {
        return tool;
    }

    ToolArguments args() {
        return args;
    }

    InvocationContext context() {
        return context;
    }

    /** The resolved call, or null before {@link ResolveStep} (or when it refused). */
    ToolCall call() {
        return call;
    }

    void call(ToolCall call) {
        this.call = call;
    }

    /** What the handler declared, or null before {@link ArgumentsStep}. */
    ToolWork work() {
        return work;
    }

    void work(ToolWork work) {
        this.work = work;
    }

    /** The conversation's workspace, held under its lock; null outside {@link WorkspaceLockStep} or for work without one. */
    Workspace workspace() {
        return workspace;
    }

    void workspace(Workspace workspace) {
        this.workspace = workspace;
    }

    /** The planned run, or null when the work runs no program ({@link PolicyStep}). */
    ToolWork.Run<?> run() {
        return run;
    }

    void run(ToolWork.Run<?> run) {
        this.run = run;
    }

    /** The files the run changed, or null when not reported ({@link ChangeTrackingStep}). */
    ChangedFiles changed() {
        return changed;
    }

    void changed(ChangedFiles changed) {
        this.changed = changed;
    }
}
