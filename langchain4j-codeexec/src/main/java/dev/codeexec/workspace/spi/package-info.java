/**
 * The workspace file SPI, for backend authors: what a new backend (a container, a remote kernel, a cloud sandbox)
 * implements so that the core applies the library's file rules on top of it. Application code does not need this
 * package; it uses {@link dev.codeexec.engine.WorkspaceFS} through {@link dev.codeexec.engine.Engine#fs()}.
 *
 * <p>Implement {@link dev.codeexec.workspace.spi.WorkspaceFiles}, the primitives of one workspace (resolve, stat and
 * walk without following links, read a window, atomic write, mkdirs, delete, batch import and export), with
 * workspace-relative {@code String} paths and bytes or lent streams only, and hand it to
 * {@link dev.codeexec.workspace.StandardWorkspaceFS}, which decides everything else: paths, input sources, output
 * globs and limits, inline or artifact output, MIME types and access rules. A provider proves itself by extending
 * {@code dev.codeexec.tck.WorkspaceFilesContractTest} of the TCK module ({@code langchain4j-codeexec-tck}).
 *
 * <p>A provider whose workspace lives elsewhere (a container, a cloud sandbox, a pod) extends
 * {@link dev.codeexec.workspace.spi.RemoteWorkspaceFiles}, which holds the path rules and the link-resolving walk over
 * an abstract {@code lstat}, listing, read, write, mkdir and delete of the remote side, and supplies only its
 * transport.
 *
 * <p>It sits under {@code dev.codeexec.workspace} rather than in {@link dev.codeexec.spi} because the host-directory
 * file system ({@link dev.codeexec.workspace.HostWorkspaceFS}) is built on it, and the engine support layer in
 * {@code dev.codeexec.spi} builds on the workspace package: packages form no cycle. This package depends on
 * {@code dev.codeexec.engine} only.
 */
package dev.codeexec.workspace.spi;
