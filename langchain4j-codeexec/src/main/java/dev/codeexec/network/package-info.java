/**
 * Graded egress: which hosts a program may reach, and the proxy that enforces it.
 *
 * <p>An {@link dev.codeexec.network.EgressPolicy} is a list of {@link dev.codeexec.network.EgressRule}s (host names,
 * {@code *.suffix} patterns, IP addresses and ranges, each with ports and a protocol) that allow or deny. An
 * {@link dev.codeexec.network.EgressProxy} owned by the engine enforces it: programs have no route out but the proxy,
 * no DNS of their own, and every connection is decided by the proxy on the name it was asked for and on the addresses
 * that name resolves to, at connect time. Connections no rule covers go to an
 * {@link dev.codeexec.network.EgressApprover} or are refused; every decision is an
 * {@link dev.codeexec.network.EgressEvent}.
 *
 * <p>See {@code docs/network.md} for the model, the rule syntax and what each backend enforces.
 */
package dev.codeexec.network;
