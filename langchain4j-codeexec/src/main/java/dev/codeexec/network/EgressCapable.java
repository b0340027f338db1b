package dev.codeexec.network;

import java.util.Optional;

/**
 * An engine that can hold its programs to an {@link EgressPolicy} through a proxy it owns
 * ({@link dev.codeexec.engine.EgressControl#PROXY}): its {@link WorkspaceEgress}, where a workspace's policy is
 * narrowed and connection events are heard. The workspace tools use it to report connections in their audit and
 * metrics.
 */
public interface EgressCapable {

    /** The engine's egress; empty when it was built without an egress policy. */
    Optional<WorkspaceEgress> egress();
}
