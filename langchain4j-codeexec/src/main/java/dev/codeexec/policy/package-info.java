/**
 * Command policy for model-written shell commands: {@link dev.codeexec.policy.CommandPolicy} parses a command line in
 * a safe shell subset and checks every command against a built-in deny list, allow and deny lists and
 * {@link dev.codeexec.policy.ArgumentValidator}s; the result is a {@link dev.codeexec.policy.ParsedCommand} to run
 * with {@code sh -c} in a clean environment, to which {@link dev.codeexec.policy.EnvironmentScrubber} lets only
 * harmless caller variables through.
 *
 * <p>A name-based policy narrows what a model tries; it is not an isolation boundary. Run policy-checked commands on a
 * backend that isolates them.
 */
package dev.codeexec.policy;
