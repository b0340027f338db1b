/**
 * The E2B backend: {@link dev.codeexec.e2b.E2bEngine} runs programs and python cells in E2B cloud sandboxes
 * (Firecracker microVMs), one per workspace or one shared ({@link dev.codeexec.e2b.WorkspaceMode}), through E2B's
 * REST control plane ({@link dev.codeexec.e2b.E2bControlPlane}) and each sandbox's envd (Connect over HTTP/1.1 with
 * the JDK's HTTP client) and code interpreter. Failures are typed ({@link dev.codeexec.e2b.E2bError} and its
 * exceptions). Sandboxes cost money while they run: the engine kills those it created.
 */
package dev.codeexec.e2b;
