package dev.codeexec.network;

import java.util.Objects;

/**
 * A connection no rule of the policy covers, as an {@link EgressApprover} is asked about it. The proxy asks before
 * it looks the name up (an unapproved name is never resolved); after an approval the addresses are still checked:
 * an approved name that resolves to a non-public address, or to a denied range, stays refused.
 *
 * @param workspaceId the workspace (conversation) whose program asked for it
 * @param target      the host, port and kind of connection
 * @param reason      the policy's reason for not deciding, with what it allows
 */
public record EgressRequest(String workspaceId, EgressTarget target, String reason) {

    public EgressRequest {
        Objects.requireNonNull(workspaceId, "workspaceId");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(reason, "reason");
    }
}
