package dev.codeexec.spring;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.springframework.boot.convert.DurationUnit;

/**
 * Python blocks as cells of one kernel per workspace inside the sandbox or the container ({@code pythonKernel} on
 * their engines): variables, imports and loaded data persist from one block to the next, inside the same boundary as
 * a run. The jupyter backend always runs a kernel (only the idle timeout applies to it); the other backends refuse
 * {@code enabled}.
 */
public class PythonKernelProperties {

    /** Whether python blocks run in a kernel per workspace (sandbox, container). Default false: a process each. */
    private boolean enabled;

    /** The Python inside the boundary that runs ipykernel (default python3 on the run's PATH). */
    private String python;

    /** A kernel idle this long is stopped; its state is gone, its files stay (default 30m). */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration idleTimeout;

    /** How long a kernel may take to start and answer (default 30s). */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration startTimeout;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getPython() {
        return python;
    }

    public void setPython(String python) {
        this.python = python;
    }

    public Duration getIdleTimeout() {
        return idleTimeout;
    }

    public void setIdleTimeout(Duration idleTimeout) {
        this.idleTimeout = idleTimeout;
    }

    public Duration getStartTimeout() {
        return startTimeout;
    }

    public void setStartTimeout(Duration startTimeout) {
        this.startTimeout = startTimeout;
    }
}
