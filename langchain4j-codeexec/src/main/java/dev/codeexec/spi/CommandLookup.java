package dev.codeexec.spi;

import dev.codeexec.engine.InvalidSpecException;
import java.util.function.Predicate;

/**
 * The one rule for finding a run's command: a bare name is looked up on the run's own {@code PATH}, never the JVM's;
 * a name with a {@code /} is used as given (relative to the working directory). As {@code execvp} does, an empty
 * {@code PATH} entry is skipped and a relative one is taken relative to the working directory; the backend decides
 * whether a candidate is usable (a sandbox refuses files it hides).
 */
public final class CommandLookup {

    private CommandLookup() {
    }

    /**
     * Resolves {@code cmd}.
     *
     * @param cmd    the command of the run
     * @param path   the run's {@code PATH}, or null
     * @param cwd    the run's absolute working directory, as the program sees it
     * @param usable tells whether an absolute candidate path is an executable file the program can run, as the
     *               backend sees it (on the host: a regular, executable file that the sandbox does not hide)
     * @return the absolute path of the command, or {@code cmd} when it contains a {@code /}
     * @throws InvalidSpecException when no entry of the {@code PATH} has it
     */
    public static String resolve(String cmd, String path, String cwd, Predicate<String> usable) {
        if (cmd.contains("/")) {
            return cmd;
        }
        if (path != null) {
            for (String dir : path.split(":")) {
                if (dir.isEmpty()) {
                    continue;
                }
                String absolute = dir.startsWith("/") ? dir : cwd + "/" + dir;
                String candidate = absolute.endsWith("/") ? absolute + cmd : absolute + "/" + cmd;
                if (usable.test(candidate)) {
                    return candidate;
                }
            }
        }
        // The PATH itself is not quoted: it may come from the host's environment.
        throw new InvalidSpecException("command '" + cmd + "' was not found on the run's PATH; give an absolute "
                + "path, or set PATH in the run's environment");
    }
}
