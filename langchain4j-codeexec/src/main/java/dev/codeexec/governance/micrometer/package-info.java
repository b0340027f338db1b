/**
 * Micrometer metrics of the workspace tools: {@link dev.codeexec.governance.micrometer.MicrometerExecutionListener}.
 * The only package of this library that uses Micrometer, an optional dependency: add
 * {@code io.micrometer:micrometer-core} to use it. See {@code docs/events.md}.
 */
package dev.codeexec.governance.micrometer;
