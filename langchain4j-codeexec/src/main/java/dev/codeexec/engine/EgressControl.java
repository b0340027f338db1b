package dev.codeexec.engine;

/**
 * How an engine can hold programs to an egress policy (hosts, ports and address ranges they may reach; see
 * {@code dev.codeexec.network.EgressPolicy}). An engine asked for a policy it cannot enforce refuses with
 * {@link UnsupportedCapabilityException}, before anything runs.
 */
public enum EgressControl {

    /** No egress policy: the network is all or nothing ({@link Capabilities#networkAllowed()}). */
    NONE,

    /**
     * Every rule is enforced by a proxy the engine owns, which is the programs' only way out: names resolved by the
     * proxy, addresses checked at connect time, TLS server names compared, approval and limits per workspace.
     */
    PROXY,

    /**
     * The rules are handed to the provider's own egress controls when the sandbox is created; rule kinds the
     * provider cannot express are refused, and what it enforces is the provider's to keep (see the backend's docs).
     */
    PROVIDER
}
