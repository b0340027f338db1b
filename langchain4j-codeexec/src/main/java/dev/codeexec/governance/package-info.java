/**
 * Governance of what the workspace tools do: an {@link dev.codeexec.governance.ExecutionApprover} that decides, before
 * anything runs or changes, whether a command may run, code may run, a file may be written or an artifact saved; and
 * {@link dev.codeexec.governance.ExecutionEvent}s for audit and metrics, delivered to
 * {@link dev.codeexec.governance.ExecutionListener}s such as the SLF4J
 * {@link dev.codeexec.governance.AuditLogListener} and, where the application has Micrometer,
 * {@code dev.codeexec.governance.micrometer.MicrometerExecutionListener}.
 *
 * <p>Configure both on {@code CodeExecution.builder()}: {@code .approver(...)}, {@code .approvalTimeout(...)},
 * {@code .listener(...)}. See {@code docs/approval.md} and {@code docs/events.md}.
 *
 * <p>This package does not depend on LangChain4j or on Micrometer; only its {@code micrometer} subpackage uses
 * Micrometer, an optional dependency.
 */
package dev.codeexec.governance;
