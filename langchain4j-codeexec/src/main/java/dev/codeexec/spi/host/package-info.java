/**
 * The host-family SPI: the plumbing of backends whose programs are processes of this host (local, sandbox, the
 * Jupyter engine's kernels and commands), and the host-side volumes that bound a workspace's size (sandbox,
 * container). Backend authors may build on it; like the rest of {@link dev.codeexec.spi} it is not application API.
 *
 * <p>Each class, and who uses it:
 * <ul>
 *   <li>{@link dev.codeexec.spi.host.HostProcessChannel}: the {@link dev.codeexec.spi.ProcessChannel} of a host
 *       {@link java.lang.Process}, the one place where a host process starts with exactly its launch's
 *       environment (local, sandbox, Jupyter);</li>
 *   <li>{@link dev.codeexec.spi.host.HostRuns} and {@link dev.codeexec.spi.host.HostRunPlace}: a plain host run
 *       (working directory, run directory, environment, wrappers) of a backend without a sandbox (local, Jupyter;
 *       the sandbox uses the run place);</li>
 *   <li>{@link dev.codeexec.spi.host.ParentDeath} and {@link dev.codeexec.spi.host.PidNamespace}: runs die with the
 *       JVM and are killed as a whole (local, Jupyter; the sandbox has bubblewrap do both);
 *       {@link dev.codeexec.spi.host.LauncherThreads}: the threads that launch them (local, sandbox, Jupyter);</li>
 *   <li>{@link dev.codeexec.spi.host.Cgroups}: memory, process and CPU limits of host runs (local, sandbox);</li>
 *   <li>{@link dev.codeexec.spi.host.QuotaVolumes}: loop-mounted size-bounded workspace volumes (sandbox,
 *       container).</li>
 * </ul>
 * {@code ProcessTreeKiller} stays package-private: the host channel is its one caller.
 *
 * <p>Layering: this package builds on {@link dev.codeexec.spi}, {@link dev.codeexec.workspace},
 * {@link dev.codeexec.policy} and the API, never on a backend or the LangChain4j adapter. A remote backend (E2B,
 * a cluster) does not use it: its programs do not run on this host. The architecture tests of the core and of each
 * backend module check these rules; see "Layers" in {@code docs/backend-authors.md}.
 */
package dev.codeexec.spi.host;
