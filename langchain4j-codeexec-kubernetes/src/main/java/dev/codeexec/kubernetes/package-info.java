/**
 * The Kubernetes backend: one hardened pod per workspace in a configured namespace (or, where the agent-sandbox CRDs
 * are installed, the pod of a {@code SandboxClaim}), runs and sessions over the {@code pods/exec} subresource, files
 * as tar over exec. Built on the fabric8 Kubernetes client and the core's remote family bases.
 */
package dev.codeexec.kubernetes;
