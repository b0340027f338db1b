package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.policy.CommandPolicy;
import dev.codeexec.policy.EnvironmentScrubber;
import dev.codeexec.policy.ParsedCommand;
import java.nio.file.Path;
import java.util.Map;

/**
 * How the tools apply a {@link CommandPolicy}: check the line, pin each command to the executable it will run, render
 * the checked argv for {@code sh -c}, and scrub the variables the model passed.
 *
 * <p>Why running the result with {@code sh -c} is no policy hole: the parser accepts only words, quotes and the
 * operators {@code | && || ;}, so nothing in the line expands; {@link ParsedCommand#toShellScript()} then single-quotes
 * every word, so the shell sees exactly the argv lists the policy checked, joined by the operators it checked. The
 * shell starts from a clean environment (no {@code ENV}, {@code BASH_ENV}, exported functions or aliases) and reads no
 * startup file, and shells, wrappers and re-executing builtins are denied as command names. Command names are
 * resolved to absolute paths on the run's {@code PATH} before rendering, so a file the model plants later on that
 * {@code PATH} cannot stand in for an allowed name. The shell is only the pipe fitter.
 */
final class CommandGate {

    private final CommandPolicy policy;
    private final EnvironmentScrubber scrubber;
    private final String path;

    /**
     * The gate of a configured policy, or null when there is none or it enforces nothing ({@code permissive()}).
     *
     * @param scrubber null for {@link EnvironmentScrubber#defaults()}
     * @param path     null for {@link CodeExecution#DEFAULT_POLICY_PATH}
     */
    static CommandGate of(CommandPolicy policy, EnvironmentScrubber scrubber, String path) {
        return policy == null || !policy.isEnforcing() ? null : new CommandGate(policy,
                scrubber != null ? scrubber : EnvironmentScrubber.defaults(),
                path != null ? path : CodeExecution.DEFAULT_POLICY_PATH);
    }

    /**
     * @param path the {@code PATH} of a clean run, used to pin command names on backends that run programs on this
     *             host's file system
     */
    CommandGate(CommandPolicy policy, EnvironmentScrubber scrubber, String path) {
        this.policy = policy;
        this.scrubber = scrubber;
        this.path = path;
    }

    /**
     * The {@code sh -c} script for {@code commandLine} run in no particular workspace: a command written as a
     * relative path is refused.
     *
     * @throws dev.codeexec.engine.PolicyViolationException when the policy refuses it; the message says why
     */
    String check(Engine engine, String commandLine) {
        return check(engine, commandLine, null, null);
    }

    /**
     * The {@code sh -c} script for {@code commandLine}, decided on the files it will execute, per call.
     *
     * <p>On the backends that run programs on this host's file system (local, OS sandbox), every command word is
     * followed to its file in the workspace's view (relative ones from the run's working directory) and judged by
     * what that file is ({@link ParsedCommand#resolveExecutables(String, Path)}). On the others the policy cannot see
     * the files: bare names are checked by name and looked up there when the run starts, and a command written as a
     * path is refused (fail closed).
     *
     * @param ws  the workspace the command will run in, or null
     * @param cwd the workspace-relative working directory of the run, or null for the workspace root
     * @throws dev.codeexec.engine.PolicyViolationException when the policy refuses it; the message says why
     */
    String check(Engine engine, String commandLine, Workspace ws, String cwd) {
        ParsedCommand parsed = policy.check(commandLine);
        Isolation isolation = engine.describe().isolation();
        if (isolation == Isolation.NONE || isolation == Isolation.OS_SANDBOX) {
            // These backends run programs on this host's file system, so the lookup here is the lookup there.
            Path dir = ws == null ? null : Path.of(ws.path()).resolve(cwd == null ? "" : cwd).normalize();
            parsed = parsed.resolveExecutables(path, dir);
        } else {
            for (String command : parsed.commands()) {
                if (command.indexOf('/') >= 0) {
                    throw new PolicyViolationException("command '" + (command.length() <= 80 ? command
                            : command.substring(0, 77) + "...") + "' is written as a path, and on the '"
                            + engine.name() + "' engine the command policy cannot see which file a path names;"
                            + " write the command's bare name. Nothing was run.");
                }
            }
        }
        return parsed.toShellScript();
    }

    /** The parsed command the policy accepts for {@code commandLine}, for the approver. */
    ParsedCommand parse(String commandLine) {
        return policy.check(commandLine);
    }

    /**
     * Fails closed on an engine that cannot start programs from a clean environment, which every policy run needs.
     *
     * @throws UnsupportedCapabilityException when {@code engine} has no clean environment
     */
    void requireCleanEnv(Engine engine) {
        if (!engine.describe().supportsCleanEnv()) {
            throw new UnsupportedCapabilityException("refused: a command policy is configured, and it needs an "
                    + "engine that starts programs from a clean environment; the '" + engine.name()
                    + "' engine cannot. Nothing was run.");
        }
    }

    /** The variables of {@code env} a policy run may receive (drops PATH, LD_PRELOAD, BASH_ENV and the like). */
    Map<String, String> scrubEnv(Map<String, String> env) {
        return scrubber.scrub(env);
    }
}
