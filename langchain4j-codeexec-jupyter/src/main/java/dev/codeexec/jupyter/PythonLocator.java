package dev.codeexec.jupyter;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.RunResult;
import dev.codeexec.spi.host.HostProcessChannel;
import dev.codeexec.spi.host.HostRunPlace;
import dev.codeexec.spi.CommandLookup;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.ProgramRuns;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Finds the Python that runs kernels: the one configured, else the first candidate that can import ipykernel. The
 * candidates are {@code python3} in every entry of the kernel environment's {@code PATH}, then the system's
 * {@code /usr/bin/python3}, {@code /usr/local/bin/python3} and {@code /bin/python3}. A candidate is probed by running
 * it with {@code -c "import ipykernel"}: a {@code python3} found first on a {@code PATH} is often a virtual
 * environment's or a version manager's shim without ipykernel, which would only fail once the kernel starts.
 */
final class PythonLocator {

    static final List<String> SYSTEM_CANDIDATES = List.of("/usr/bin/python3", "/usr/local/bin/python3",
            "/bin/python3");

    private static final String PROBE = "import sys, ipykernel; print(sys.version.split()[0], ipykernel.__version__)";
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(30);

    /**
     * A Python that imports ipykernel.
     *
     * @param configured a path or a bare name set by the application, or null to search
     * @param env        the kernel's environment (its {@code PATH} is searched; the probe runs with it)
     * @return the interpreter's absolute path (a configured path as given)
     * @throws BackendUnavailableException naming every candidate tried and why it did not do
     */
    static Found locate(String configured, Map<String, String> env) {
        List<String> candidates = new ArrayList<>();
        if (configured != null) {
            try {
                candidates.add(CommandLookup.resolve(configured, env.get("PATH"), "/", HostRunPlace::isExecutableFile));
            } catch (InvalidSpecException e) {
                throw new BackendUnavailableException("the Python configured for Jupyter kernels, '" + configured
                        + "', was not found on the kernel environment's PATH. Give an absolute path to a Python with "
                        + "ipykernel, or install it (Debian: apt-get install python3-ipykernel).", e);
            }
        } else {
            String path = env.get("PATH");
            if (path != null) {
                for (String dir : path.split(":")) {
                    if (dir.startsWith("/")) {
                        candidates.add((dir.endsWith("/") ? dir : dir + "/") + "python3");
                    }
                }
            }
            candidates.addAll(SYSTEM_CANDIDATES);
        }
        Map<String, String> tried = new LinkedHashMap<>();
        List<String> seen = new ArrayList<>();
        for (String c : candidates) {
            if (!HostRunPlace.isExecutableFile(c)) {
                if (configured != null) {
                    tried.put(c, "not an executable file");
                }
                continue;
            }
            String real = realPath(c);
            if (seen.contains(real)) {
                continue;
            }
            seen.add(real);
            String problem = probe(c, env);
            if (problem == null) {
                return new Found(c, tried);
            }
            tried.put(c, problem);
        }
        StringBuilder sb = new StringBuilder("no Python that can run a Jupyter kernel was found");
        if (tried.isEmpty()) {
            sb.append(": no python3 on the kernel environment's PATH nor in ").append(SYSTEM_CANDIDATES);
        } else {
            sb.append("; tried ");
            tried.forEach((c, why) -> sb.append(c).append(" (").append(why).append("), "));
            sb.setLength(sb.length() - 2);
        }
        sb.append(". Install ipykernel for one of them (Debian: apt-get install python3-ipykernel) or set "
                + "JupyterEngine.builder().python(...) to a Python that has it.");
        throw new BackendUnavailableException(sb.toString());
    }

    /** Null when {@code python} imports ipykernel, else why not (one short line). */
    static String probe(String python, Map<String, String> env) {
        RunResult r;
        try {
            r = ProgramRuns.run(HostProcessChannel.direct(), new ProgramLaunch(List.of(python, "-c", PROBE), env,
                    "/", null, PROBE_TIMEOUT, 16 * 1024, null));
        } catch (RuntimeException e) {
            return "cannot be started";
        }
        if (r.timedOut()) {
            return "did not answer within " + PROBE_TIMEOUT.toSeconds() + " s";
        }
        if (r.exitCode() != 0) {
            List<String> lines = r.stderr().strip().lines().toList();
            String last = lines.isEmpty() ? "" : lines.get(lines.size() - 1).strip();
            return last.isEmpty() ? "exited with status " + r.exitCode() : last;
        }
        return null;
    }

    private static String realPath(String p) {
        try {
            return Path.of(p).toRealPath().toString();
        } catch (IOException e) {
            return p;
        }
    }

    /**
     * @param python  the interpreter to run kernels with
     * @param skipped candidates tried before it and why each did not do
     */
    record Found(String python, Map<String, String> skipped) {
    }
}
