package dev.codeexec.e2b;

/**
 * How {@link E2bEngine} maps workspaces to sandboxes.
 *
 * <table>
 *   <caption>The trade-off</caption>
 *   <tr><th></th><th>{@link #SANDBOX_PER_WORKSPACE}</th><th>{@link #SHARED_SANDBOX}</th></tr>
 *   <tr><td>isolation between workspaces</td><td>a VM each: none sees another</td>
 *       <td>none: programs of one workspace can read and change the others' files and processes</td></tr>
 *   <tr><td>creating a workspace</td><td>a sandbox start (about a second on E2B) and its setup</td>
 *       <td>a directory (one request)</td></tr>
 *   <tr><td>cost</td><td>one running sandbox per live workspace</td><td>one sandbox for all</td></tr>
 *   <tr><td>removing a workspace</td><td>the sandbox is killed</td>
 *       <td>its programs are killed and its directory removed</td></tr>
 *   <tr><td>failure blast radius</td><td>one workspace</td><td>every workspace when the sandbox dies</td></tr>
 * </table>
 */
public enum WorkspaceMode {

    /** Each workspace gets a sandbox of its own, killed when the workspace is removed. The default. */
    SANDBOX_PER_WORKSPACE,

    /**
     * All workspaces are directories of one sandbox, created at the first workspace (or an existing one the engine
     * connects to). Only for workspaces that trust each other: one tenant, one application.
     */
    SHARED_SANDBOX
}
