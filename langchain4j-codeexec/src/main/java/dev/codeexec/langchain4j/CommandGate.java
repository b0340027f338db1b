package dev.codeexec.langchain4j;

import java.util.Map;

/**
 * The tools' view of a command policy: checks a command line and scrubs the environment a policy run gets. The
 * policy's own parser decides; this interface only keeps the tools independent of how it is configured.
 */
interface CommandGate {

    /**
     * Checks {@code commandLine} against the policy and returns the line to run with {@code bash -c}.
     *
     * @throws dev.codeexec.engine.PolicyViolationException when the policy refuses it; the message says why
     */
    String check(String commandLine);

    /** The variables of {@code env} a policy run may receive (drops PATH, LD_PRELOAD, BASH_ENV and the like). */
    Map<String, String> scrubEnv(Map<String, String> env);
}
