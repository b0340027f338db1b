/**
 * The container backend: {@link dev.codeexec.container.ContainerEngine} runs model-written programs in Docker (or
 * Podman's Docker API) containers through docker-java.
 *
 * <p>Each workspace gets one long-lived container from an operator-chosen image, and each program run is an exec
 * inside it, so that files and installed state persist within a conversation while every run is bounded on its own.
 * The defaults are hardened: no network, all capabilities dropped, no-new-privileges, memory, CPU and process limits
 * on the container. Files move in and out of the container as tar archives through the Engine API.
 */
package dev.codeexec.container;
