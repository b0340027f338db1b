package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.RunResult;
import java.nio.file.Path;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells a failed sandbox setup from the program's own result, from the run's private status channel only (see
 * {@link Launcher}): never from what the program printed or its exit code, which are the program's result even
 * when they look like a launcher or bubblewrap error.
 */
final class SetupStatus {

    private static final Logger LOG = LoggerFactory.getLogger(SetupStatus.class);

    private static final Pattern EXIT_CODE = Pattern.compile("\\{\\s*\"exit-code\"\\s*:\\s*-?\\d+\\s*}");

    private SetupStatus() {
    }

    /** The status file of a run: bubblewrap's JSON status, or the launcher's own report, written on descriptor 9. */
    static Path statusFile(Path runDir) {
        return runDir.resolveSibling(runDir.getFileName() + ".status");
    }

    /**
     * Checks a run's result against its status.
     *
     * @param r         what the launch returned
     * @param status    the status file's content
     * @param viaBwrap  true when bubblewrap reported on the status descriptor, false when the launcher did
     * @param workspace the run's workspace root (a bubblewrap failure on a path in it is a concurrent change)
     * @return the program's result ({@code r}, or exit code 127 when bubblewrap could not execute the command)
     * @throws PolicyViolationException    when a path to be mounted changed during setup (nothing ran)
     * @throws BackendUnavailableException when the sandbox could not be set up (nothing ran)
     */
    static RunResult check(RunResult r, String status, boolean viaBwrap, Path workspace) {
        for (String line : status.lines().toList()) {
            if (line.startsWith(Launcher.FAILED + " ")) {
                String[] f = line.split(" ", 3);
                String reason = f.length > 2 ? f[2] : "unknown reason";
                if (f.length > 1 && f[1].equals(Launcher.CHANGED)) {
                    throw new PolicyViolationException("the sandbox was not started: " + reason + " (a program "
                            + "running in the same workspace may be swapping it for a link). Nothing ran.");
                }
                throw new BackendUnavailableException("the sandbox could not be set up: " + reason + ". Nothing ran.");
            }
        }
        boolean started = viaBwrap ? EXIT_CODE.matcher(status).find()
                : status.lines().anyMatch(Launcher.STARTED::equals);
        if (started || r.timedOut()) {
            return r;
        }
        if (!viaBwrap) {
            throw new BackendUnavailableException("the sandbox launcher ended before it started the program (exit "
                    + "code " + r.exitCode() + "). Nothing ran.");
        }
        // bubblewrap ended before it executed the program, so everything on stderr is bubblewrap's own.
        String line = r.stderr().lines().filter(l -> l.startsWith("bwrap: ")).findFirst().orElse("");
        if (line.startsWith("bwrap: execvp ")) {
            // The command could not be executed inside the sandbox: report it like a shell would.
            return new RunResult(r.stdout(), "command not found or not executable inside the sandbox\n", 127,
                    r.duration(), r.timedOut(), r.stdoutTruncated(), r.stderrTruncated());
        }
        if (line.contains("Race condition binding") || line.contains(workspace + "/")) {
            LOG.debug("bubblewrap refused a changed path: {}", line);
            // What bubblewrap mounted was not the verified descriptor, or a destination in the workspace was no
            // longer what the plan saw (typically a link planted where a mount lands).
            throw new PolicyViolationException("the sandbox was not started: a path to be mounted changed during "
                    + "setup (a program running in the same workspace may be swapping it for a link). Nothing ran.");
        }
        if (line.contains("Unable to apply mount flags")) {
            LOG.debug("the host's mount table changed while bubblewrap set up a sandbox: {}", line);
            throw new MountTableChangedException("the sandbox could not be set up: the host's mounts changed during "
                    + "setup. Nothing ran.");
        }
        LOG.warn("bubblewrap could not set up a sandbox: {}", line.isEmpty() ? "no message" : line.length() > 300
                ? line.substring(0, 300) + "..." : line);
        throw new BackendUnavailableException("the sandbox could not be set up (bubblewrap failed; the log has "
                + "the detail). Nothing ran.");
    }
}
