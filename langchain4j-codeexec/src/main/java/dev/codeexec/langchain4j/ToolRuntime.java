package dev.codeexec.langchain4j;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.governance.ExecutionApprover;
import dev.codeexec.governance.ExecutionListener;
import dev.codeexec.workspace.snapshot.SnapshotOptions;
import dev.codeexec.workspace.snapshot.WorkspaceSnapshots;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.invocation.InvocationContext;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The workspace tools behind both faces, the {@code @Tool} methods of {@link WorkspaceTools} and the
 * {@link dev.langchain4j.service.tool.ToolProvider}: one {@link ToolHandler} per tool, and the parts they share,
 * wired once per {@link CodeExecution}.
 *
 * <p>A call goes through the {@link ToolPipeline}, whose steps are listed here in their order; handlers only validate
 * and declare their work. Session input and kills work on the session alone, without the workspace lock, so that a
 * program that does not read cannot hold the conversation up.
 *
 * <p>Also the way in for application code ({@link WorkspaceIO}): the same workspaces, command rules and artifact
 * store.
 */
final class ToolRuntime implements AutoCloseable {

    private final Engine defaultEngine;
    private final ToolSettings settings;
    private final ToolCallResolver resolver;
    private final BackgroundSessions sessions;
    private final ChangeTrackers changes;
    private final ToolWorkspaces workspaces;
    private final CommandSpecs commands;
    private final ToolArtifacts artifacts;
    private final ToolSnapshots snapshots;
    private final ToolGovernance governance;
    private final CallApproval approval;
    private final ToolPipeline pipeline;

    /**
     * @param gate     the command policy's gate, or null without a policy
     * @param approver the approver, or null to approve everything without asking
     */
    ToolRuntime(Engine engine, ArtifactService artifacts, ArtifactScope artifactScope, CommandGate gate,
                ToolSettings settings, ExecutionApprover approver, Duration approvalTimeout,
                List<ExecutionListener> listeners, SnapshotOptions snapshotOptions) {
        this.defaultEngine = engine;
        this.settings = settings;
        // The workspaces are read lazily: the governance is built first because the workspaces report to it.
        this.governance = new ToolGovernance(listeners, settings);
        this.approval = new CallApproval(approver, approvalTimeout, settings, gate, this::existingWorkspace);
        this.resolver = new ToolCallResolver(engine, settings.requireMemoryId(), governance);
        this.sessions = new BackgroundSessions(settings.sessionTtl(), System::nanoTime, governance::sessionRemoved);
        this.changes = new ChangeTrackers(settings.reportChangedFiles(), sessions);
        // A workspace closed or reaped takes its change tracker with it.
        this.workspaces = new ToolWorkspaces(
                new ConversationWorkspaces(settings.workspaceIdleTtl(), governance, changes::forget),
                new InvocationAttachments(new AttachmentStager(settings.maxAttachmentBytes())), changes, settings);
        this.commands = new CommandSpecs(gate, settings.inheritEnvironment());
        this.artifacts = new ToolArtifacts(artifacts, artifactScope, settings.maxArtifactBytes());
        this.snapshots = new ToolSnapshots(this.artifacts, snapshotOptions);
        this.pipeline = ToolPipeline.of(settings, governance, resolver, new ToolErrors(settings, sessions),
                handlers(gate), approval, workspaces, changes);
    }

    private Map<WorkspaceTool, ToolHandler> handlers(CommandGate gate) {
        SessionCalls sessionCalls = new SessionCalls(sessions, settings);
        Map<WorkspaceTool, ToolHandler> handlers = new EnumMap<>(WorkspaceTool.class);
        handlers.put(WorkspaceTool.EXEC, new ExecTool(settings, commands, sessionCalls));
        handlers.put(WorkspaceTool.WRITE_STDIN, new WriteStdinTool(settings, sessionCalls));
        handlers.put(WorkspaceTool.KILL_SESSION, new KillSessionTool(sessionCalls));
        handlers.put(WorkspaceTool.READ_FILE, new ReadFileTool(settings));
        handlers.put(WorkspaceTool.WRITE_FILE, new WriteFileTool(settings));
        handlers.put(WorkspaceTool.LIST_FILES, new ListFilesTool(settings));
        handlers.put(WorkspaceTool.EXECUTE_CODE, new ExecuteCodeTool(settings, gate));
        handlers.put(WorkspaceTool.SAVE_ARTIFACT, new SaveArtifactTool(artifacts));
        handlers.put(WorkspaceTool.STAGE_ARTIFACT, new StageArtifactTool(artifacts));
        handlers.put(WorkspaceTool.SNAPSHOT, new SnapshotTool(snapshots));
        handlers.put(WorkspaceTool.RESTORE, new RestoreTool(snapshots));
        return handlers;
    }

    private Optional<Workspace> existingWorkspace(Engine engine, String key) {
        return workspaces.find(engine, key);
    }

    ToolSettings settings() {
        return settings;
    }

    Engine defaultEngine() {
        return defaultEngine;
    }

    /** Runs one tool call through the {@link ToolPipeline}; never throws for anything the model or the engine did. */
    ToolResult call(WorkspaceTool tool, ToolArguments args, InvocationContext ctx) {
        return pipeline.call(tool, args, ctx);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Application code (WorkspaceIO)

    /** Runs {@code fn} under the workspace lock without staging. */
    <T> T withWorkspace(Engine engine, String key, Function<Workspace, T> fn) {
        return workspaces.withWorkspace(engine == null ? defaultEngine : engine, key, fn);
    }

    /** Stages a message's files; returns what happened, one entry per file. The caller holds the workspace lock. */
    List<AttachmentStager.Staged> stageAttachments(Engine engine, Workspace ws, UserMessage message) {
        return workspaces.stageAttachments(engine == null ? defaultEngine : engine, ws, message);
    }

    /** The spec {@code workspace_exec} would run for a command line; see {@link CommandSpecs}. */
    RunProgramSpec commandSpec(Engine engine, Workspace ws, String command, Map<String, String> env, String cwd,
                               String stdin, Duration timeout) {
        return commands.command(engine, ws, command, env, cwd, stdin, timeout);
    }

    /** The artifact prefix of a workspace key under the configured scope. */
    String artifactPrefix(String key) {
        return artifacts.prefix(key);
    }

    ArtifactService artifactService(Engine engine) {
        return artifacts.service(engine);
    }

    /** Whether calls on {@code engine} can save and stage artifacts (the application or the engine has a store). */
    boolean hasArtifactStore(Engine engine) {
        return artifacts.available(engine);
    }

    /** The snapshots of conversation {@code key} on {@code engine} (its artifact store, its scope). */
    WorkspaceSnapshots snapshots(Engine engine, String key) {
        return snapshots.of(engine == null ? defaultEngine : engine, key);
    }

    /** The configured snapshot options (what a capture takes, and the bounds of captures and restores). */
    SnapshotOptions snapshotOptions() {
        return snapshots.options();
    }

    /** The engine an invocation with these parameters runs on. */
    Engine engineFor(dev.langchain4j.invocation.InvocationParameters params) {
        return resolver.engine(params);
    }

    /** Saves one workspace file as an artifact by the store's full name; the caller holds the workspace lock. */
    ToolArtifacts.SavedArtifact saveArtifact(Engine engine, Workspace ws, ArtifactService service, String path,
                                             String name) {
        return artifacts.save(engine, ws, service, path, name);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Lifecycle

    void closeWorkspace(String key) {
        sessions.closeFor(key);
        workspaces.close(key);
    }

    /** The pipeline every call goes through (for tests). */
    ToolPipeline pipeline() {
        return pipeline;
    }

    /** The change trackers (for tests). */
    ChangeTrackers changes() {
        return changes;
    }

    @Override
    public void close() {
        try {
            sessions.close();
        } finally {
            try {
                workspaces.close();
            } finally {
                approval.close();
                changes.close();
            }
        }
    }
}
