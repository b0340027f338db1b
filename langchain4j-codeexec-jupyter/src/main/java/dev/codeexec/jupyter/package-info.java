/**
 * The Jupyter backend (planned): a {@code JupyterEngine} that runs code cells in a real ipykernel, spoken to over the
 * Jupyter wire protocol on ZeroMQ (jeromq, pure Java).
 *
 * <p>Kernel state persists across cells within a workspace, and rich outputs such as images are saved as files in
 * the workspace's output directory. A kernel is a process on its host, not a security boundary: run it inside a
 * sandbox or container when the code is not trusted.
 *
 * <p>This package is empty until the Jupyter backend issue fills it; the module already fixes its coordinates and
 * keeps jeromq out of the core module.
 */
package dev.codeexec.jupyter;
