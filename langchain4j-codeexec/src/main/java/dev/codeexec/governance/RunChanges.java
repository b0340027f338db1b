package dev.codeexec.governance;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Changes an {@link ExecutionApprover} makes to a run it allows ({@link ApprovalDecision#allowWith(RunChanges)}).
 * Changes can only tighten what the application configured and the model asked for: a time limit longer than the
 * call's own is refused, and the call is then not run at all (fail closed), with a clear result for the model and a
 * warning in the log. Changes apply to runs ({@link ExecutionAction#isRun()}) only; changes to a file write or an
 * artifact are refused the same way.
 *
 * <p>Immutable.
 */
public final class RunChanges {

    private final Duration timeout;

    private RunChanges(Duration timeout) {
        this.timeout = timeout;
    }

    /**
     * A shorter time limit for the run (for a background session: a shorter life).
     *
     * @param timeout positive, and at most the call's own limit ({@link ApprovalRequest#timeout()})
     * @throws IllegalArgumentException when {@code timeout} is not positive
     */
    public static RunChanges shorterTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout (" + timeout + ") must be positive");
        }
        return new RunChanges(timeout);
    }

    /** The new time limit, or empty to keep the call's own. */
    public Optional<Duration> timeout() {
        return Optional.ofNullable(timeout);
    }

    /** The tighter of this and {@code other}: the shorter time limit. */
    public RunChanges tightest(RunChanges other) {
        if (other == null || other.timeout == null) {
            return this;
        }
        if (timeout == null || other.timeout.compareTo(timeout) < 0) {
            return other;
        }
        return this;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RunChanges c && Objects.equals(timeout, c.timeout);
    }

    @Override
    public int hashCode() {
        return Objects.hashCode(timeout);
    }

    @Override
    public String toString() {
        return "RunChanges[timeout=" + timeout + "]";
    }
}
