/**
 * Internal: the core's run and session machinery behind {@link dev.codeexec.spi.ProgramRuns}: the one output
 * limiter, session logs and sessions over a process channel, the shared I/O threads. Not part of the API; it may
 * change in any release.
 */
package dev.codeexec.internal.process;
