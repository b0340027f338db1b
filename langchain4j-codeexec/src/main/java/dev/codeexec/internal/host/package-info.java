/**
 * Internal: the host plumbing of the host-directory backends (local, sandbox): the host process channel, the one
 * process-tree killer, where a run happens. Not part of the API; it may change in any release. Backends outside
 * this project build on {@link dev.codeexec.spi} instead.
 */
package dev.codeexec.internal.host;
