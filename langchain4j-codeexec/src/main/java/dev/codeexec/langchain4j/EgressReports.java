package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import dev.codeexec.governance.ExecutionEvent;
import dev.codeexec.network.EgressCapable;
import dev.codeexec.network.EgressEvent;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Reports the connections the programs of a conversation's workspace make through their engine's egress proxy as
 * {@link ExecutionEvent.Connection}s of that conversation. Listens to an engine's egress from its first workspace on;
 * a connection of a workspace the tools do not know (application code's own) is not reported. Thread-safe.
 */
final class EgressReports {

    private final Consumer<ExecutionEvent> emit;
    private final Map<String, String> conversations = new ConcurrentHashMap<>();
    private final Set<Engine> heard = ConcurrentHashMap.newKeySet();

    EgressReports(Consumer<ExecutionEvent> emit) {
        this.emit = emit;
    }

    void workspaceCreated(Engine engine, String key, Workspace ws) {
        conversations.put(ws.id(), key);
        if (engine instanceof EgressCapable capable && heard.add(engine)) {
            capable.egress().ifPresent(egress -> egress.addListener(e -> report(engine, e)));
        }
    }

    void workspaceRemoved(Workspace ws) {
        conversations.remove(ws.id());
    }

    private void report(Engine engine, EgressEvent e) {
        String key = conversations.get(e.workspaceId());
        if (key != null) {
            emit.accept(new ExecutionEvent.Connection(key, null, engine.name(), e.timestamp(), e.workspaceId(), e));
        }
    }
}
