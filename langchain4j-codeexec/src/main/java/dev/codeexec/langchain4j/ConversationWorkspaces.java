package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import dev.codeexec.governance.ExecutionEvent;
import dev.codeexec.workspace.WorkspaceRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * One {@link WorkspaceRegistry} per engine in use (the configured one, and any passed per invocation): one workspace
 * per conversation key, created on first use, every use serialised by the registry's per-workspace lock so that tool
 * calls of one conversation never interleave, even when AiServices runs tools concurrently.
 */
final class ConversationWorkspaces implements AutoCloseable {

    private final Duration idleTtl;
    private final ToolGovernance governance;
    private final BiConsumer<Engine, Workspace> removed;
    private final Map<Engine, WorkspaceRegistry> registries = new ConcurrentHashMap<>();

    /**
     * @param idleTtl    workspaces idle this long are removed; null keeps them until closed
     * @param governance told when a workspace is created or removed
     * @param removed    told of every workspace removed (closed, reaped, or found gone), to drop what is kept for it
     */
    ConversationWorkspaces(Duration idleTtl, ToolGovernance governance, BiConsumer<Engine, Workspace> removed) {
        this.idleTtl = idleTtl;
        this.governance = governance;
        this.removed = removed;
    }

    /**
     * Runs {@code fn} holding the workspace's lock; creates the workspace first when the key has none.
     *
     * @param toolName the tool whose call this is, or null for application code
     */
    <T> T withWorkspace(Engine engine, String key, String toolName, Function<Workspace, T> fn) {
        return registry(engine).withWorkspace(key, ws -> governance.workspaceCreated(engine, key, toolName, ws), fn);
    }

    /** The key's workspace on {@code engine} if it exists; never creates one. */
    Optional<Workspace> find(Engine engine, String key) {
        WorkspaceRegistry r = registries.get(engine);
        return r == null ? Optional.empty() : r.find(key);
    }

    private WorkspaceRegistry registry(Engine engine) {
        return registries.computeIfAbsent(engine, e -> WorkspaceRegistry.builder(e).idleTtl(idleTtl)
                .removalListener((key, ws, why) -> {
                    removed.accept(e, ws);
                    governance.workspaceRemoved(e, key, ws, switch (why) {
                        case CLOSED -> ExecutionEvent.WorkspaceClosed.Reason.CLOSED;
                        case IDLE -> ExecutionEvent.WorkspaceClosed.Reason.IDLE;
                        case GONE -> ExecutionEvent.WorkspaceClosed.Reason.GONE;
                    });
                }).build());
    }

    /** Removes the conversation's workspaces (on every engine). */
    void close(String key) {
        registries.values().forEach(r -> r.close(key));
    }

    @Override
    public void close() {
        List<RuntimeException> failures = new ArrayList<>();
        for (WorkspaceRegistry r : registries.values()) {
            try {
                r.close();
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        if (!failures.isEmpty()) {
            RuntimeException first = failures.get(0);
            failures.subList(1, failures.size()).forEach(first::addSuppressed);
            throw first;
        }
    }
}
