package dev.codeexec.network;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * One connection a program asked the proxy for, reported when it ends (a refused one at once). Never carries request
 * contents: no paths, headers or bodies.
 *
 * @param timestamp   when the connection was asked for
 * @param workspaceId the workspace whose program asked
 * @param target      host, port and kind as asked
 * @param outcome     what became of it
 * @param rule        the rule that decided it, or {@code "-"}
 * @param reason      why, in words (the message a refused program got)
 * @param address     the address connected to, or {@code ""} when none was
 * @param bytesUp     bytes from the program to the host
 * @param bytesDown   bytes from the host to the program
 * @param duration    from the request to the end of the connection
 */
public record EgressEvent(Instant timestamp, String workspaceId, EgressTarget target, Outcome outcome, String rule,
                          String reason, String address, long bytesUp, long bytesDown, Duration duration) {

    /** What became of a connection. */
    public enum Outcome {
        /** A rule allowed it and it was connected. */
        ALLOWED,
        /** No rule covered it; the approver allowed it and it was connected. */
        APPROVED,
        /** A rule, the non-public address protection, the approver (or its absence) refused it. */
        DENIED,
        /** A limit of the workspace refused or ended it: connections, bytes or idle time. */
        LIMITED,
        /** Allowed, but the host could not be resolved or reached, or the request was malformed. */
        FAILED;

        /** True when the program's bytes reached the host. */
        public boolean connected() {
            return this == ALLOWED || this == APPROVED;
        }
    }

    public EgressEvent {
        Objects.requireNonNull(timestamp, "timestamp");
        Objects.requireNonNull(workspaceId, "workspaceId");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(duration, "duration");
    }
}
