package dev.codeexec.network;

/** An {@link EgressApprover}'s answer about a host no rule covers. */
public enum EgressApproval {
    /** This connection only; the next one to the same host is asked about again. */
    ALLOW_ONCE,
    /** This host and port, for the rest of the workspace's (the conversation's) life. */
    ALLOW_FOR_WORKSPACE,
    /** Refuse this connection. */
    DENY
}
