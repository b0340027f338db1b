/**
 * The backend SPI: what a backend implements so that the core does the rest.
 *
 * <ul>
 *   <li>{@link dev.codeexec.spi.ProcessChannel}: start a program (argv, environment, working directory), push its
 *       output into the core's {@link dev.codeexec.spi.OutputSink}, give back stdin, the exit status, a signal and
 *       a tree kill. {@link dev.codeexec.spi.ProgramRuns} owns runs and sessions on top of it.</li>
 *   <li>{@link dev.codeexec.spi.AbstractEngine}: the engine support layer (open check, limits, output cap, code
 *       blocks, sessions, close aggregation) that a backend's engine extends; {@link dev.codeexec.spi.RunEnvironment}
 *       and {@link dev.codeexec.spi.CommandLookup} are the one place for environments and command lookup.</li>
 *   <li>The workspace file primitives, under the one core {@link dev.codeexec.engine.WorkspaceFS}:
 *       {@link dev.codeexec.workspace.spi.WorkspaceFiles}, composed by
 *       {@link dev.codeexec.workspace.StandardWorkspaceFS} (in the workspace package, which this one builds on).</li>
 * </ul>
 *
 * <p>The family bases, so that a backend writes only what differs:
 * <ul>
 *   <li>host: the host-family SPI, {@code dev.codeexec.spi.host} (processes of this machine: the host channel, runs
 *       in the workspace's folder, cgroups, quota volumes);</li>
 *   <li>remote: {@link dev.codeexec.spi.RemoteProcessChannel} (a program on the far side of a stream, with
 *       {@link dev.codeexec.spi.ChunkedStdin}) and {@link dev.codeexec.workspace.spi.RemoteWorkspaceFiles} (files
 *       reached through lstat, list, read and write calls), and for a Linux container reached by tar archives and
 *       short commands {@link dev.codeexec.spi.ContainerShell} (the scripts) and
 *       {@link dev.codeexec.spi.ContainerShellFiles} (the write rules);</li>
 *   <li>interpreter: {@link dev.codeexec.spi.InterpreterEngine} (python blocks as cells of a stateful interpreter),
 *       with {@link dev.codeexec.spi.CellOutput} for a cell's text and rich outputs.</li>
 * </ul>
 *
 * <p>A backend is done when it implements these and its test classes extend the contract suites of the TCK module,
 * {@code langchain4j-codeexec-tck}. See {@code docs/backend-authors.md}.
 */
package dev.codeexec.spi;
