package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import java.time.Duration;
import java.util.Map;

/**
 * The run spec of a command line, for {@code workspace_exec} and {@link WorkspaceIO#runCommand}: checked by the
 * command policy when one is configured (then with a clean, scrubbed environment, refused on engines that cannot
 * provide one), else run as given with the engine's clean environment unless the application asked to inherit its
 * own.
 *
 * <p>In policy mode the checked line runs as {@code sh -c} of the policy's rendering; {@link CommandGate} explains why
 * that shell is no way around the policy.
 */
final class CommandSpecs {

    private final CommandGate gate;
    private final boolean inheritEnvironment;

    /** @param gate the command policy's gate, or null without a policy */
    CommandSpecs(CommandGate gate, boolean inheritEnvironment) {
        this.gate = gate;
        this.inheritEnvironment = inheritEnvironment;
    }

    /**
     * @param ws the workspace the run will use (the policy decides on the files it will execute there)
     * @throws dev.codeexec.engine.PolicyViolationException       when the policy refuses the line
     * @throws dev.codeexec.engine.UnsupportedCapabilityException when a policy is set and the engine cannot start
     *                                                            programs from a clean environment
     */
    RunProgramSpec command(Engine engine, Workspace ws, String command, Map<String, String> env, String cwd,
                           String stdin, Duration timeout) {
        String line = command;
        Map<String, String> runEnv = env == null ? Map.of() : env;
        boolean cleanEnv = !inheritEnvironment && engine.describe().supportsCleanEnv();
        if (gate != null) {
            gate.requireCleanEnv(engine);
            line = gate.check(engine, command, ws, cwd);
            runEnv = gate.scrubEnv(runEnv);
            cleanEnv = true;
        }
        RunProgramSpec.Builder spec = gate != null ? RunProgramSpec.builder("sh").args("-c", line)
                : RunProgramSpec.shell(line);
        return spec.env(runEnv).cleanEnv(cleanEnv).cwd(cwd).stdin(stdin).timeout(timeout).build();
    }
}
