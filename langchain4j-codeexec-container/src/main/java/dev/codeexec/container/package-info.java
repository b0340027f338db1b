/**
 * The container backend (planned): a {@code ContainerEngine} that runs model-written programs in Docker or Podman
 * through docker-java.
 *
 * <p>Each workspace gets one long-lived container, and each program run is an exec inside it, so that files and
 * installed state persist within a conversation while every run is bounded on its own. The defaults are hardened: no
 * network, all capabilities dropped, and memory, CPU and process-count limits on the container. Files move in and out
 * of the container as tar streams.
 *
 * <p>This package is empty until the container backend issue fills it; the module already fixes its coordinates and
 * keeps docker-java out of the core module.
 */
package dev.codeexec.container;
