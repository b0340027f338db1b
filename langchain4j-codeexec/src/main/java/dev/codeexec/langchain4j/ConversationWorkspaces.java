package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import dev.codeexec.workspace.WorkspaceRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
    private final BiConsumer<Engine, Workspace> removed;
    private final Map<Engine, WorkspaceRegistry> registries = new ConcurrentHashMap<>();

    /**
     * @param idleTtl workspaces idle this long are removed; null keeps them until closed
     * @param removed told of every workspace removed (closed, reaped, or found gone), to drop what is kept for it
     */
    ConversationWorkspaces(Duration idleTtl, BiConsumer<Engine, Workspace> removed) {
        this.idleTtl = idleTtl;
        this.removed = removed;
    }

    /** Runs {@code fn} holding the workspace's lock; creates the workspace first when the key has none. */
    <T> T withWorkspace(Engine engine, String key, Function<Workspace, T> fn) {
        return registries.computeIfAbsent(engine, e -> WorkspaceRegistry.builder(e).idleTtl(idleTtl)
                .onRemove(ws -> removed.accept(e, ws)).build()).withWorkspace(key, fn);
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
