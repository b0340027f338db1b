package dev.codeexec.kubernetes;

import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * What a workspace's pod lacks of the engine's hardening, from {@link KubernetesEngine#hardeningOf}. A pod of the
 * engine's own lacks nothing of {@link PodHardening} (the engine wrote its spec); a pod claimed from agent-sandbox is
 * checked when it is claimed, and may lack settings only when the builder accepts the template as is
 * ({@link KubernetesEngine.Builder#acceptUnhardenedSandbox}). Whether the tree kill holds is probed in every pod: it
 * needs {@code python3} or {@code perl} in the image, and a pod without either is used only when the builder accepts
 * that ({@link KubernetesEngine.Builder#acceptWithoutTreeKill}).
 *
 * <p>A per-workspace value rather than a field of {@code Capabilities}, because it is known only once the pod exists,
 * and two pods of one warm pool can differ (a template changed between them).
 *
 * @param missing  each hardened setting the pod lacks, with where and what was found; empty when none
 * @param treeKill true when a timeout or a kill ends the run's whole process tree, detached daemons included (the
 *                 run's wrapper is a child subreaper); false when a daemon that double-forks away outlives the run
 */
public record WorkspaceHardening(Map<PodHardening, List<String>> missing, boolean treeKill) {

    /** Copies {@code missing}, so the value cannot change later. */
    public WorkspaceHardening {
        EnumMap<PodHardening, List<String>> copy = new EnumMap<>(PodHardening.class);
        missing.forEach((setting, where) -> copy.put(setting, List.copyOf(where)));
        missing = Collections.unmodifiableMap(copy);
    }

    /** True when the pod is as hardened as the engine's own and the tree kill holds. */
    public boolean complete() {
        return missing.isEmpty() && treeKill;
    }
}
