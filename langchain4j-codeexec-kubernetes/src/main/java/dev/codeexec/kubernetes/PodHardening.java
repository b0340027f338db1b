package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.Capabilities;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.SeccompProfile;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Volume;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The hardened settings the engine gives its own pods, as a checklist for a pod it did not write: the pod an
 * agent-sandbox {@code SandboxClaim} yields comes from the operator's {@code SandboxTemplate}, so the engine reads the
 * pod and compares. {@link #missingFrom} reports each setting the pod lacks and where; the engine refuses such a pod
 * unless its builder accepts the template as is, and {@code Capabilities} can report the list either way.
 *
 * <p>Effective values follow Kubernetes: a container's {@code securityContext} overrides the pod's for
 * {@code runAsNonRoot}, {@code runAsUser} and {@code seccompProfile}. Every entry of {@code spec.containers} is
 * checked (an exec can enter any of them and they share the pod's network); init containers have finished by the
 * time the claim is ready and are not checked. The check fails closed: a setting left unset counts as missing even
 * where a cluster default (a ServiceAccount with {@code automountServiceAccountToken: false}, a kubelet default
 * seccomp profile) might supply it, because the pod spec cannot show that.
 */
enum PodHardening {

    /** Every container runs as a non-root user: {@code runAsNonRoot: true} or a non-zero {@code runAsUser}, never uid 0. */
    RUN_AS_NON_ROOT,
    /** No container is {@code privileged}. */
    NOT_PRIVILEGED,
    /** Every container has {@code allowPrivilegeEscalation: false} (no setuid gain). */
    NO_PRIVILEGE_ESCALATION,
    /** Every container drops {@code ALL} capabilities and adds none back. */
    DROP_ALL_CAPABILITIES,
    /** Every container has {@code readOnlyRootFilesystem: true}; only volumes are writable. */
    READ_ONLY_ROOT_FILESYSTEM,
    /** Every container's effective seccomp profile is {@code RuntimeDefault} (a {@code Localhost} profile can allow anything). */
    SECCOMP_RUNTIME_DEFAULT,
    /** The pod sets {@code automountServiceAccountToken: false}: code in it gets no API credentials. */
    NO_SERVICE_ACCOUNT_TOKEN,
    /** The pod shares none of the node's network, PID or IPC namespaces. */
    NO_HOST_NAMESPACES,
    /** The pod mounts no {@code hostPath} volume. */
    NO_HOST_PATH_VOLUMES,
    /** The pod runs under the RuntimeClass the builder asked for (checked only when one was asked for). */
    RUNTIME_CLASS;

    /**
     * The settings {@code spec} lacks, each with where (a container name or {@code "pod"}) and what was found, in
     * declaration order; empty when the pod is as hardened as the engine's own.
     *
     * @param spec             the claimed pod's spec, as read from the API server
     * @param runtimeClassName the RuntimeClass required, or null not to check {@link #RUNTIME_CLASS}
     */
    static Map<PodHardening, List<String>> missingFrom(PodSpec spec, String runtimeClassName) {
        Map<PodHardening, List<String>> missing = new EnumMap<>(PodHardening.class);
        PodSecurityContext pod = spec.getSecurityContext() == null ? new PodSecurityContext() : spec.getSecurityContext();
        for (Container container : spec.getContainers()) {
            String where = "container " + container.getName();
            SecurityContext sc = container.getSecurityContext() == null ? new SecurityContext() : container.getSecurityContext();
            Boolean nonRoot = sc.getRunAsNonRoot() != null ? sc.getRunAsNonRoot() : pod.getRunAsNonRoot();
            Long uid = sc.getRunAsUser() != null ? sc.getRunAsUser() : pod.getRunAsUser();
            if ((uid != null && uid == 0) || (!Boolean.TRUE.equals(nonRoot) && uid == null)) {
                add(missing, RUN_AS_NON_ROOT, where + ": runAsNonRoot=" + nonRoot + ", runAsUser=" + uid);
            }
            if (Boolean.TRUE.equals(sc.getPrivileged())) {
                add(missing, NOT_PRIVILEGED, where + ": privileged=true");
            }
            if (!Boolean.FALSE.equals(sc.getAllowPrivilegeEscalation())) {
                add(missing, NO_PRIVILEGE_ESCALATION, where + ": allowPrivilegeEscalation=" + sc.getAllowPrivilegeEscalation());
            }
            Capabilities caps = sc.getCapabilities();
            List<String> drop = caps == null || caps.getDrop() == null ? List.of() : caps.getDrop();
            List<String> added = caps == null || caps.getAdd() == null ? List.of() : caps.getAdd();
            if (drop.stream().noneMatch("ALL"::equalsIgnoreCase) || !added.isEmpty()) {
                add(missing, DROP_ALL_CAPABILITIES, where + ": drop=" + drop + ", add=" + added);
            }
            if (!Boolean.TRUE.equals(sc.getReadOnlyRootFilesystem())) {
                add(missing, READ_ONLY_ROOT_FILESYSTEM, where + ": readOnlyRootFilesystem=" + sc.getReadOnlyRootFilesystem());
            }
            SeccompProfile seccomp = sc.getSeccompProfile() != null ? sc.getSeccompProfile() : pod.getSeccompProfile();
            String seccompType = seccomp == null ? null : seccomp.getType();
            if (!"RuntimeDefault".equals(seccompType)) {
                add(missing, SECCOMP_RUNTIME_DEFAULT, where + ": seccompProfile=" + seccompType);
            }
        }
        if (!Boolean.FALSE.equals(spec.getAutomountServiceAccountToken())) {
            add(missing, NO_SERVICE_ACCOUNT_TOKEN, "pod: automountServiceAccountToken=" + spec.getAutomountServiceAccountToken());
        }
        if (Boolean.TRUE.equals(spec.getHostNetwork()) || Boolean.TRUE.equals(spec.getHostPID())
                || Boolean.TRUE.equals(spec.getHostIPC())) {
            add(missing, NO_HOST_NAMESPACES, "pod: hostNetwork=" + spec.getHostNetwork() + ", hostPID=" + spec.getHostPID()
                    + ", hostIPC=" + spec.getHostIPC());
        }
        for (Volume volume : spec.getVolumes() == null ? List.<Volume>of() : spec.getVolumes()) {
            if (volume.getHostPath() != null) {
                add(missing, NO_HOST_PATH_VOLUMES, "pod: volume " + volume.getName() + " is hostPath " + volume.getHostPath().getPath());
            }
        }
        if (runtimeClassName != null && !runtimeClassName.equals(spec.getRuntimeClassName())) {
            add(missing, RUNTIME_CLASS, "pod: runtimeClassName=" + spec.getRuntimeClassName() + ", required " + runtimeClassName);
        }
        missing.replaceAll((setting, where) -> Collections.unmodifiableList(where));
        return Collections.unmodifiableMap(missing);
    }

    /** One line per missing setting, for an exception message or a log line: {@code SETTING (where; where)}. */
    static String describe(Map<PodHardening, List<String>> missing) {
        List<String> lines = new ArrayList<>();
        missing.forEach((setting, where) -> lines.add(setting + " (" + String.join("; ", where) + ")"));
        return String.join(", ", lines);
    }

    private static void add(Map<PodHardening, List<String>> missing, PodHardening setting, String where) {
        missing.computeIfAbsent(setting, s -> new ArrayList<>()).add(where);
    }
}
