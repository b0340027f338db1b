package dev.codeexec.jupyter;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.InvalidSpecException;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The argv that starts a kernel: the {@linkplain JupyterEngine.Builder#kernelCommand configured command}, else the
 * {@linkplain JupyterEngine.Builder#python configured or located} Python's {@code ipykernel_launcher}. The settings
 * are checked when the engine is built; the Python is located once, with the first kernel, and a failure to find one
 * is remembered so every later start reports it without probing again. Kept apart from {@link JupyterEngine} so the
 * engine is about workspaces and cells, not about which interpreter runs them.
 */
final class KernelCommand {

    /** The engine's logger: these lines are part of what the engine reports. */
    private static final Logger LOG = LoggerFactory.getLogger(JupyterEngine.class);

    private final String python;
    private final List<String> kernelCommand;
    private final Object lock = new Object();
    /** The kernel argv, resolved once; or why it cannot be. Guarded by {@code lock}. */
    private List<String> resolvedCommand;
    private BackendUnavailableException commandFailure;

    /**
     * @throws InvalidSpecException when {@code kernelCommand} is empty, does not name the connection file, or is set
     *                              together with {@code python}
     */
    KernelCommand(String python, List<String> kernelCommand) {
        if (kernelCommand != null) {
            if (kernelCommand.isEmpty() || kernelCommand.stream()
                    .noneMatch(a -> a.contains(JupyterEngine.CONNECTION_FILE))) {
                throw new InvalidSpecException("kernelCommand (" + kernelCommand + ") must name the connection "
                        + "file as " + JupyterEngine.CONNECTION_FILE);
            }
            if (python != null) {
                throw new InvalidSpecException("set python or kernelCommand, not both");
            }
        }
        this.python = python;
        this.kernelCommand = kernelCommand == null ? null : List.copyOf(kernelCommand);
    }

    /**
     * The kernel's argv template, with {@link JupyterEngine#CONNECTION_FILE} where the connection file goes.
     *
     * @param env the kernel environment, in which a Python given by name (or {@code python3}) is looked up
     * @throws BackendUnavailableException when no Python that can import ipykernel is found
     */
    List<String> argv(Supplier<Map<String, String>> env) {
        if (kernelCommand != null) {
            return kernelCommand;
        }
        synchronized (lock) {
            if (resolvedCommand != null) {
                return resolvedCommand;
            }
            if (commandFailure != null) {
                throw new BackendUnavailableException(commandFailure.getMessage(), commandFailure);
            }
            try {
                PythonLocator.Found found = PythonLocator.locate(python, env.get());
                found.skipped().forEach((c, why) -> LOG.info("JupyterEngine: {} cannot run kernels: {}", c, why));
                LOG.info("JupyterEngine runs kernels with {}", found.python());
                resolvedCommand = List.of(found.python(), "-m", "ipykernel_launcher", "-f",
                        JupyterEngine.CONNECTION_FILE);
                return resolvedCommand;
            } catch (BackendUnavailableException e) {
                commandFailure = e;
                throw e;
            }
        }
    }
}
