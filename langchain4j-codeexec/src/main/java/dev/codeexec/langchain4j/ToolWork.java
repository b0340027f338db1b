package dev.codeexec.langchain4j;

import dev.codeexec.engine.Workspace;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What a {@link ToolHandler} asks of the {@link ToolPipeline} once it has validated a call's arguments: the work, and
 * what it needs. The pipeline does the rest (approval, the workspace lock, attachments, change tracking, events).
 *
 * <ul>
 *   <li>{@link #alone}: no workspace, no lock, no approval (input to and kills of background sessions);</li>
 *   <li>{@link #reading}: in the workspace, reading it only;</li>
 *   <li>{@link #changing}: in the workspace, changing its files (the change tracker looks again before the next run);</li>
 *   <li>{@link #running}: runs one program, planned on the workspace (the command policy decides there) and run with
 *       change tracking, so that the result reports the files the run changed.</li>
 * </ul>
 */
final class ToolWork {

    private final Supplier<ToolResult> alone;
    private final Function<Workspace, ToolResult> inWorkspace;
    private final Function<Workspace, Run<?>> plan;
    private final boolean changesFiles;

    private ToolWork(Supplier<ToolResult> alone, Function<Workspace, ToolResult> inWorkspace,
                     Function<Workspace, Run<?>> plan, boolean changesFiles) {
        this.alone = alone;
        this.inWorkspace = inWorkspace;
        this.plan = plan;
        this.changesFiles = changesFiles;
    }

    /** Work that touches no workspace file: done without the workspace, its lock or an approval. */
    static ToolWork alone(Supplier<ToolResult> work) {
        return new ToolWork(Objects.requireNonNull(work), null, null, false);
    }

    /** Work that only reads the workspace. */
    static ToolWork reading(Function<Workspace, ToolResult> work) {
        return new ToolWork(null, Objects.requireNonNull(work), null, false);
    }

    /** Work that may change the workspace's files. */
    static ToolWork changing(Function<Workspace, ToolResult> work) {
        return new ToolWork(null, Objects.requireNonNull(work), null, true);
    }

    /**
     * A program run: {@code plan} decides on the workspace what runs (the command policy's checks happen there) and
     * returns the run; the pipeline runs it with change tracking.
     */
    static ToolWork running(Function<Workspace, Run<?>> plan) {
        return new ToolWork(null, null, Objects.requireNonNull(plan), false);
    }

    /** The same work, also counted as changing files before its run (the change tracker looks before it). */
    ToolWork changingFiles() {
        return new ToolWork(alone, inWorkspace, plan, true);
    }

    /** Whether the work needs the conversation's workspace (and so its lock and an approval). */
    boolean usesWorkspace() {
        return alone == null;
    }

    /** Whether the work may change files besides through a tracked run. */
    boolean changesFiles() {
        return changesFiles;
    }

    /** The planned run, or null when the work runs no program. */
    Run<?> plan(Workspace ws) {
        return plan == null ? null : plan.apply(ws);
    }

    /** Does work that is not a run: {@code ws} is null for work {@link #alone}. */
    ToolResult doIn(Workspace ws) {
        return alone != null ? alone.get() : inWorkspace.apply(ws);
    }

    /**
     * A planned run: what starts it, and how its result and the files it changed read to the model.
     *
     * @param <R> the engine's result
     */
    static final class Run<R> {

        private final Supplier<R> start;
        private final BiFunction<R, ChangedFiles, ToolResult> text;
        private R result;

        Run(Supplier<R> start, BiFunction<R, ChangedFiles, ToolResult> text) {
            this.start = start;
            this.text = text;
        }

        /** Runs the program and keeps its result. */
        void start() {
            result = start.get();
        }

        /** The result text of the finished run; {@code changed} is null when not reported. */
        ToolResult text(ChangedFiles changed) {
            return text.apply(result, changed);
        }
    }
}
