package dev.codeexec.kubernetes;

import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * A pod obtained through an agent-sandbox {@code SandboxClaim}: what the engine needs to exec into it and to release
 * it. Releasing means deleting {@link #claimName()} ({@link SandboxClaims#release}); the controller then deletes the
 * sandbox and its pod.
 *
 * @param claimName       the {@code SandboxClaim} the engine created
 * @param claimUid        its uid; the controller puts it on the Sandbox's pod template as
 *                        {@code agents.x-k8s.io/claim-uid} (v0.5 does not copy that label onto the pod)
 * @param sandboxName     the {@code Sandbox} the controller bound to the claim ({@code status.sandbox.name})
 * @param podName         the pod to exec into
 * @param podUid          that pod's uid, so that a pod of the same name made later is told apart from it
 * @param container       the container of that pod to exec into
 * @param missingHardening the engine's hardened settings the pod lacks, each with where; empty for a pod as hardened
 *                         as the engine's own (the network included). Non-empty only when the settings accept the template
 *                         as is.
 */
record ClaimedSandbox(String claimName, String claimUid, String sandboxName, String podName, String podUid,
                      String container,
                      Map<PodHardening, List<String>> missingHardening) {

    ClaimedSandbox {
        missingHardening = missingHardening.isEmpty() ? Map.of()
                : Collections.unmodifiableMap(new EnumMap<>(missingHardening));
    }
}
