package dev.codeexec.network;

/**
 * Receives an {@link EgressEvent} per connection. Called on the proxy's connection threads, for many workspaces at
 * once; must be thread-safe and quick. A listener that throws is logged and does not affect the connection.
 */
@FunctionalInterface
public interface EgressListener {

    void onEgress(EgressEvent event);
}
