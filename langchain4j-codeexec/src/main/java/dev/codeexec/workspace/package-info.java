/**
 * The workspace rules, written once: SPI for backend authors, not application API. Applications use a workspace
 * through {@link dev.codeexec.engine.WorkspaceFS}, {@link dev.codeexec.engine.WorkspaceManager} and
 * {@link dev.codeexec.engine.Workspace}, which this package implements; they never need a class of it.
 *
 * <p>What backends build on:
 * <ul>
 *   <li>{@link dev.codeexec.workspace.PathResolver}, the one resolver of workspace paths, and
 *       {@link dev.codeexec.workspace.WorkspaceLayout}, the names and variables of the layout;</li>
 *   <li>{@link dev.codeexec.workspace.StandardWorkspaceFS}, the one {@code WorkspaceFS} over a backend's file
 *       primitives ({@link dev.codeexec.workspace.spi}), and {@link dev.codeexec.workspace.HostWorkspaceFS} and
 *       {@link dev.codeexec.workspace.HostWorkspaceManager} for backends whose workspace is a host directory;</li>
 *   <li>{@link dev.codeexec.workspace.WorkspaceGlob}, {@link dev.codeexec.workspace.SafeNames},
 *       {@link dev.codeexec.workspace.FileTrees}, {@link dev.codeexec.workspace.WorkspaceSpace},
 *       {@link dev.codeexec.workspace.WorkspaceStorage} and {@link dev.codeexec.workspace.RunHistory}: the one glob
 *       syntax, safe names, tree removal, room checks, storage and per-run bookkeeping;</li>
 *   <li>{@link dev.codeexec.workspace.WorkspaceRegistry}: the per-conversation registry the engine support layer and
 *       the LangChain4j adapter share.</li>
 * </ul>
 *
 * <p>Why SPI and not API: its public classes are the machinery that makes every backend apply the same file rules,
 * and change as backends need; an application that reached for them would bypass the engine's checks. Why a package
 * of its own below {@link dev.codeexec.spi} rather than part of it: the command policy (for its environment-name
 * globs) and the LangChain4j adapter (for tool paths and the registry) build on it too, and neither may see the
 * engine support layer. Layering: it uses the API ({@code dev.codeexec}, {@link dev.codeexec.engine},
 * {@link dev.codeexec.artifact}) only; see "Layers" in {@code docs/backend-authors.md}.
 */
package dev.codeexec.workspace;
