package dev.codeexec.governance;

/** Who refused a tool call, in an {@link ExecutionEvent.Refusal}. */
public enum RefusalKind {

    /**
     * A configured rule: the command policy, an access rule or a sandbox's mount planning, a disabled tool, a missing
     * conversation id the application requires.
     */
    POLICY,
    /** The {@link ExecutionApprover}: denied, no answer in time, or it failed. */
    APPROVAL,
    /** The path resolver: a path that leaves the workspace (as given, or through a link). */
    PATH,
    /** The engine cannot do it: no clean environment for a policy, no sessions, no artifact store, a limit it lacks. */
    CAPABILITY
}
