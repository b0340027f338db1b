package dev.codeexec.jupyter;

import dev.codeexec.engine.InvalidSpecException;
import java.time.Duration;

/**
 * The time bounds of an engine's kernels, with the defaults filled in and checked once when the engine is built: how
 * long a kernel may take to start, how long an interrupted cell may take to stop, and the heartbeat period and
 * timeout (which must be longer than the period). A value of its own so the engine's constructor only wires parts.
 */
record KernelTimings(Duration start, Duration interruptGrace, Duration heartbeatInterval, Duration heartbeatTimeout) {

    /**
     * Fills in the defaults for null values and checks the rest.
     *
     * @throws InvalidSpecException for a value that is not positive, or a heartbeat timeout not longer than the period
     */
    static KernelTimings of(Duration start, Duration interruptGrace, Duration heartbeatInterval,
                            Duration heartbeatTimeout) {
        Duration s = positive(start, Duration.ofSeconds(JupyterEngine.DEFAULT_START_TIMEOUT_SECONDS),
                "kernelStartTimeout");
        Duration g = positive(interruptGrace, Duration.ofSeconds(JupyterEngine.DEFAULT_INTERRUPT_GRACE_SECONDS),
                "interruptGrace");
        Duration hi = positive(heartbeatInterval,
                Duration.ofMillis(JupyterEngine.DEFAULT_HEARTBEAT_INTERVAL_MILLIS), "heartbeatInterval");
        Duration ht = positive(heartbeatTimeout,
                Duration.ofSeconds(JupyterEngine.DEFAULT_HEARTBEAT_TIMEOUT_SECONDS), "heartbeatTimeout");
        if (ht.compareTo(hi) <= 0) {
            throw new InvalidSpecException("heartbeatTimeout (" + ht + ") must be longer than "
                    + "heartbeatInterval (" + hi + ")");
        }
        return new KernelTimings(s, g, hi, ht);
    }

    private static Duration positive(Duration d, Duration dflt, String name) {
        if (d == null) {
            return dflt;
        }
        if (d.isNegative() || d.isZero()) {
            throw new InvalidSpecException(name + " (" + d + ") must be positive");
        }
        return d;
    }
}
