package dev.codeexec.jupyter;

import java.time.Duration;

/**
 * How an engine with a boundary runs python cells in a kernel inside it ({@link BoundaryKernels}): the Python inside
 * the boundary that runs ipykernel, and the kernel's time bounds. Immutable; built with {@link #builder()}.
 *
 * <p>Given to an engine's builder ({@code SandboxEngine.Builder.pythonKernel}, {@code ContainerEngine.Builder
 * .pythonKernel}), it switches python blocks from a fresh process per block to one kernel per workspace, started with
 * the first python block and kept until it has been idle for {@link #idleTimeout()}.
 */
public final class KernelOptions {

    /** {@value} minutes: how long a kernel may stay idle before it is stopped, by default. */
    public static final int DEFAULT_IDLE_TIMEOUT_MINUTES = 30;

    private final String python;
    private final Duration startTimeout;
    private final Duration interruptGrace;
    private final Duration heartbeatInterval;
    private final Duration heartbeatTimeout;
    private final Duration idleTimeout;

    private KernelOptions(Builder b) {
        this.python = b.python;
        this.startTimeout = b.startTimeout;
        this.interruptGrace = b.interruptGrace;
        this.heartbeatInterval = b.heartbeatInterval;
        this.heartbeatTimeout = b.heartbeatTimeout;
        this.idleTimeout = b.idleTimeout;
    }

    /** The defaults: {@code python3} inside the boundary, the Jupyter engine's time bounds, 30 minutes idle. */
    public static KernelOptions defaults() {
        return builder().build();
    }

    /** A builder with the defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The Python inside the boundary that runs the kernel's relay and, as its child, ipykernel; default
     * {@code python3}. It must import ipykernel (Debian: {@code python3-ipykernel}).
     */
    public String python() {
        return python;
    }

    /** How long a kernel may take to start and answer; null for the default. */
    public Duration startTimeout() {
        return startTimeout;
    }

    /** How long an interrupted cell may take to stop, per attempt; null for the default. */
    public Duration interruptGrace() {
        return interruptGrace;
    }

    /** The heartbeat period; null for the default. */
    public Duration heartbeatInterval() {
        return heartbeatInterval;
    }

    /** No heartbeat echo for this long means the kernel is dead; null for the default. */
    public Duration heartbeatTimeout() {
        return heartbeatTimeout;
    }

    /**
     * How long a kernel may stay idle before it is stopped (its state is then gone, its files stay); null for no
     * idle timeout.
     */
    public Duration idleTimeout() {
        return idleTimeout;
    }

    /** Builder for {@link KernelOptions}. */
    public static final class Builder {
        private String python = "python3";
        private Duration startTimeout;
        private Duration interruptGrace;
        private Duration heartbeatInterval;
        private Duration heartbeatTimeout;
        private Duration idleTimeout = Duration.ofMinutes(DEFAULT_IDLE_TIMEOUT_MINUTES);

        private Builder() {
        }

        /** The Python inside the boundary: an absolute path or a name on the run's {@code PATH}. */
        public Builder python(String python) {
            this.python = python;
            return this;
        }

        /**
         * How long a kernel may take to start and answer; default
         * {@value JupyterEngine#DEFAULT_START_TIMEOUT_SECONDS} s, as on the Jupyter engine.
         */
        public Builder startTimeout(Duration v) {
            this.startTimeout = v;
            return this;
        }

        /**
         * How long an interrupted cell may take to return to idle, per attempt (the interrupt request, then SIGINT),
         * before the kernel is stopped; default {@value JupyterEngine#DEFAULT_INTERRUPT_GRACE_SECONDS} s.
         */
        public Builder interruptGrace(Duration v) {
            this.interruptGrace = v;
            return this;
        }

        /** The heartbeat period; default {@value JupyterEngine#DEFAULT_HEARTBEAT_INTERVAL_MILLIS} ms. */
        public Builder heartbeatInterval(Duration v) {
            this.heartbeatInterval = v;
            return this;
        }

        /**
         * How long a kernel may leave heartbeats unanswered before it is declared dead and killed; default
         * {@value JupyterEngine#DEFAULT_HEARTBEAT_TIMEOUT_SECONDS} s; longer than the period.
         */
        public Builder heartbeatTimeout(Duration v) {
            this.heartbeatTimeout = v;
            return this;
        }

        /**
         * How long a kernel may stay idle (no cell) before it is stopped; the next cell starts a fresh kernel and
         * its result says the earlier state is gone. Default {@value #DEFAULT_IDLE_TIMEOUT_MINUTES} minutes; null for
         * none.
         */
        public Builder idleTimeout(Duration v) {
            this.idleTimeout = v;
            return this;
        }

        /**
         * The options. Time bounds are checked when an engine uses them ({@link BoundaryKernels}'s constructor).
         */
        public KernelOptions build() {
            return new KernelOptions(this);
        }
    }
}
