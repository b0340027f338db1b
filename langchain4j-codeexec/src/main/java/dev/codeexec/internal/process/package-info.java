/**
 * Internal: the shared I/O threads of runs and sessions and the bounded waits on them. Not part of the API; it may
 * change in any release.
 */
package dev.codeexec.internal.process;
