/**
 * The Jupyter backend: {@link dev.codeexec.jupyter.JupyterEngine} runs python code cells in a real ipykernel, one per
 * workspace, spoken to over the Jupyter messaging protocol on ZeroMQ (jeromq, pure Java).
 *
 * <p>Kernel state persists across cells within a workspace, and rich outputs such as images are saved as files in
 * the workspace's output directory. A kernel is a process on its host, not a security boundary: run it inside a
 * sandbox or container when the code is not trusted.
 *
 * <p>Only the engine and its builder are public; the kernel client, the wire format and cell handling are package
 * private.
 */
package dev.codeexec.jupyter;
