package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * One workspace per (engine, conversation key), created on first use, with every use serialised by a per-workspace
 * lock so that tool calls of one conversation never interleave even when AiServices runs tools concurrently.
 */
final class ConversationWorkspaces implements AutoCloseable {

    private final Map<Engine, Map<String, Slot>> byEngine = new ConcurrentHashMap<>();

    private static final class Slot {
        final ReentrantLock lock = new ReentrantLock();
        Workspace workspace;
    }

    /** Runs {@code fn} holding the workspace's lock; creates the workspace first when the key has none. */
    <T> T withWorkspace(Engine engine, String key, Function<Workspace, T> fn) {
        Slot slot = byEngine.computeIfAbsent(engine, e -> new ConcurrentHashMap<>())
                .computeIfAbsent(key, k -> new Slot());
        slot.lock.lock();
        try {
            if (slot.workspace == null) {
                slot.workspace = engine.manager().createWorkspace(key, WorkspacePolicy.DEFAULT);
            }
            return fn.apply(slot.workspace);
        } finally {
            slot.lock.unlock();
        }
    }

    /** Removes the conversation's workspaces (on every engine). */
    void close(String key) {
        for (Map.Entry<Engine, Map<String, Slot>> e : byEngine.entrySet()) {
            Slot slot = e.getValue().remove(key);
            if (slot != null) {
                cleanup(e.getKey(), slot);
            }
        }
    }

    @Override
    public void close() {
        List<RuntimeException> failures = new ArrayList<>();
        for (Map.Entry<Engine, Map<String, Slot>> e : byEngine.entrySet()) {
            for (String key : new ArrayList<>(e.getValue().keySet())) {
                Slot slot = e.getValue().remove(key);
                if (slot != null) {
                    try {
                        cleanup(e.getKey(), slot);
                    } catch (RuntimeException ex) {
                        failures.add(ex);
                    }
                }
            }
        }
        byEngine.clear();
        if (!failures.isEmpty()) {
            RuntimeException first = failures.get(0);
            failures.subList(1, failures.size()).forEach(first::addSuppressed);
            throw first;
        }
    }

    private static void cleanup(Engine engine, Slot slot) {
        slot.lock.lock();
        try {
            if (slot.workspace != null) {
                engine.manager().cleanup(slot.workspace);
                slot.workspace = null;
            }
        } finally {
            slot.lock.unlock();
        }
    }
}
