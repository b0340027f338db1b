package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.AppArmorProfile;
import io.fabric8.kubernetes.api.model.Capabilities;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SeccompProfile;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Sysctl;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeProjection;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The hardened settings the engine gives its own pods, as a checklist for a pod it did not write: the pod an
 * agent-sandbox {@code SandboxClaim} yields comes from the operator's {@code SandboxTemplate}, so the engine reads the
 * pod and compares. The engine refuses a claimed pod that lacks any of them unless its builder accepts the template as
 * is ({@link KubernetesEngine.Builder#acceptUnhardenedSandbox}); either way {@link KubernetesEngine#hardeningOf}
 * reports, per workspace, what its pod lacks.
 *
 * <p>Effective values follow Kubernetes: a container's {@code securityContext} overrides the pod's for
 * {@code runAsNonRoot}, {@code runAsUser}, {@code seccompProfile} and {@code appArmorProfile}. Every entry of
 * {@code spec.containers} is checked, and so is every native sidecar (an init container with
 * {@code restartPolicy: Always}, which keeps running beside them): an exec can enter any of them and they share the
 * pod's network. Ordinary init containers have finished by the time the claim is ready and are not checked. The check
 * fails closed: a setting left unset counts as missing even where a cluster default (a ServiceAccount with
 * {@code automountServiceAccountToken: false}, a kubelet default seccomp profile) might supply it, because the pod
 * spec cannot show that.
 *
 * <p>{@link #NETWORK_DENIED} is the one item the pod spec cannot show: the engine decides it from the namespace's
 * NetworkPolicies when it claims the pod and labels it into its own deny-all policy.
 */
public enum PodHardening {

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
    /** The pod sets {@code automountServiceAccountToken: false}: code in it gets no API credentials that way. */
    NO_SERVICE_ACCOUNT_TOKEN,
    /**
     * No credential reaches the pod another way: no {@code secret} volume, no {@code projected} volume with a
     * {@code serviceAccountToken} or {@code secret} source, no environment variable from a secret
     * ({@code env[].valueFrom.secretKeyRef}, {@code envFrom[].secretRef}); a program can read all of them.
     */
    NO_CREDENTIALS,
    /** The pod shares none of the node's network, PID or IPC namespaces, and does not ask for {@code hostUsers: true}. */
    NO_HOST_NAMESPACES,
    /** The pod does not set {@code shareProcessNamespace: true}: a program cannot see or signal the other containers. */
    NO_SHARED_PROCESS_NAMESPACE,
    /** No container binds a node port ({@code ports[].hostPort}), which bypasses NetworkPolicy on many plugins. */
    NO_HOST_PORTS,
    /** The pod mounts no {@code hostPath} volume. */
    NO_HOST_PATH_VOLUMES,
    /** Every container's {@code procMount} is {@code Default} (unset counts as it): {@code /proc} stays masked. */
    DEFAULT_PROC_MOUNT,
    /** The pod sets only sysctls Kubernetes counts as safe (namespaced, no effect on the node or other pods). */
    SAFE_SYSCTLS,
    /** No AppArmor profile is {@code Unconfined}, neither in a {@code securityContext} nor by the legacy annotation. */
    APPARMOR_CONFINED,
    /** The pod has no ephemeral (debug) containers. */
    NO_EPHEMERAL_CONTAINERS,
    /** Every container has CPU, memory and ephemeral-storage limits. */
    RESOURCE_LIMITS,
    /** The pod does not use the cluster's DNS: {@code dnsPolicy: None}, as the engine's own pods. */
    NO_CLUSTER_DNS,
    /**
     * The engine's deny-all NetworkPolicy selects the pod and no other NetworkPolicy in the namespace that selects it
     * allows any ingress or egress (policies add up: one that allows traffic opens it whatever the others say).
     */
    NETWORK_DENIED,
    /** The pod runs under the RuntimeClass the builder asked for (checked only when one was asked for). */
    RUNTIME_CLASS;

    /** The sysctls Kubernetes' Pod Security Standards count as safe (baseline profile, up to Kubernetes 1.32). */
    static final Set<String> SAFE_SYSCTL_NAMES = Set.of("kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
            "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
            "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
            "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem");

    /** The limits {@link #RESOURCE_LIMITS} requires on every container. */
    static final List<String> LIMITS = List.of("cpu", "memory", "ephemeral-storage");

    /** The legacy per-container AppArmor annotation's prefix. */
    static final String APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/";

    /**
     * The settings {@code spec} lacks, each with where (a container name or {@code "pod"}) and what was found, in
     * declaration order; empty when the pod is as hardened as the engine's own. Never reports {@link #NETWORK_DENIED}.
     *
     * @param spec             the claimed pod's spec, as read from the API server
     * @param annotations      the pod's annotations (the legacy AppArmor ones), may be null
     * @param runtimeClassName the RuntimeClass required, or null not to check {@link #RUNTIME_CLASS}
     */
    static Map<PodHardening, List<String>> missingFrom(PodSpec spec, Map<String, String> annotations,
                                                       String runtimeClassName) {
        Map<PodHardening, List<String>> missing = new EnumMap<>(PodHardening.class);
        PodSecurityContext pod = spec.getSecurityContext() == null ? new PodSecurityContext() : spec.getSecurityContext();
        for (Map.Entry<String, Container> entry : running(spec).entrySet()) {
            checkContainer(missing, entry.getKey(), entry.getValue(), pod, annotations);
        }
        if (!Boolean.FALSE.equals(spec.getAutomountServiceAccountToken())) {
            add(missing, NO_SERVICE_ACCOUNT_TOKEN, "pod: automountServiceAccountToken=" + spec.getAutomountServiceAccountToken());
        }
        if (Boolean.TRUE.equals(spec.getHostNetwork()) || Boolean.TRUE.equals(spec.getHostPID())
                || Boolean.TRUE.equals(spec.getHostIPC()) || Boolean.TRUE.equals(spec.getHostUsers())) {
            add(missing, NO_HOST_NAMESPACES, "pod: hostNetwork=" + spec.getHostNetwork() + ", hostPID=" + spec.getHostPID()
                    + ", hostIPC=" + spec.getHostIPC() + ", hostUsers=" + spec.getHostUsers());
        }
        if (Boolean.TRUE.equals(spec.getShareProcessNamespace())) {
            add(missing, NO_SHARED_PROCESS_NAMESPACE, "pod: shareProcessNamespace=true");
        }
        for (Volume volume : nonNull(spec.getVolumes())) {
            if (volume.getHostPath() != null) {
                add(missing, NO_HOST_PATH_VOLUMES, "pod: volume " + volume.getName() + " is hostPath " + volume.getHostPath().getPath());
            }
            if (volume.getSecret() != null) {
                add(missing, NO_CREDENTIALS, "pod: volume " + volume.getName() + " is secret "
                        + volume.getSecret().getSecretName());
            }
            if (volume.getProjected() != null) {
                for (VolumeProjection source : nonNull(volume.getProjected().getSources())) {
                    if (source.getServiceAccountToken() != null) {
                        add(missing, NO_CREDENTIALS, "pod: volume " + volume.getName() + " projects a service account token");
                    }
                    if (source.getSecret() != null) {
                        add(missing, NO_CREDENTIALS, "pod: volume " + volume.getName() + " projects secret "
                                + source.getSecret().getName());
                    }
                }
            }
        }
        for (Sysctl sysctl : pod.getSysctls() == null ? List.<Sysctl>of() : pod.getSysctls()) {
            if (!SAFE_SYSCTL_NAMES.contains(sysctl.getName())) {
                add(missing, SAFE_SYSCTLS, "pod: sysctl " + sysctl.getName() + "=" + sysctl.getValue());
            }
        }
        if (!nonNull(spec.getEphemeralContainers()).isEmpty()) {
            add(missing, NO_EPHEMERAL_CONTAINERS, "pod: ephemeral containers " + spec.getEphemeralContainers().stream()
                    .map(c -> c.getName()).toList());
        }
        if (!"None".equals(spec.getDnsPolicy())) {
            add(missing, NO_CLUSTER_DNS, "pod: dnsPolicy=" + spec.getDnsPolicy());
        }
        if (runtimeClassName != null && !runtimeClassName.equals(spec.getRuntimeClassName())) {
            add(missing, RUNTIME_CLASS, "pod: runtimeClassName=" + spec.getRuntimeClassName() + ", required " + runtimeClassName);
        }
        missing.replaceAll((setting, where) -> Collections.unmodifiableList(where));
        return Collections.unmodifiableMap(missing);
    }

    /** The containers that run beside the program, by where: every container, and every native sidecar. */
    private static Map<String, Container> running(PodSpec spec) {
        Map<String, Container> running = new LinkedHashMap<>();
        for (Container c : nonNull(spec.getContainers())) {
            running.put("container " + c.getName(), c);
        }
        for (Container c : nonNull(spec.getInitContainers())) {
            if ("Always".equals(c.getRestartPolicy())) {
                running.put("sidecar " + c.getName(), c);
            }
        }
        return running;
    }

    private static void checkContainer(Map<PodHardening, List<String>> missing, String where, Container container,
                                       PodSecurityContext pod, Map<String, String> annotations) {
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
        if (sc.getProcMount() != null && !"Default".equals(sc.getProcMount())) {
            add(missing, DEFAULT_PROC_MOUNT, where + ": procMount=" + sc.getProcMount());
        }
        AppArmorProfile appArmor = sc.getAppArmorProfile() != null ? sc.getAppArmorProfile() : pod.getAppArmorProfile();
        String legacy = annotations == null ? null : annotations.get(APPARMOR_ANNOTATION + container.getName());
        if ((appArmor != null && "Unconfined".equalsIgnoreCase(appArmor.getType())) || "unconfined".equalsIgnoreCase(legacy)) {
            add(missing, APPARMOR_CONFINED, where + ": appArmorProfile=" + (appArmor == null ? legacy : appArmor.getType()));
        }
        for (EnvVar env : nonNull(container.getEnv())) {
            if (env.getValueFrom() != null && env.getValueFrom().getSecretKeyRef() != null) {
                add(missing, NO_CREDENTIALS, where + ": env " + env.getName() + " from secret "
                        + env.getValueFrom().getSecretKeyRef().getName());
            }
        }
        for (EnvFromSource from : nonNull(container.getEnvFrom())) {
            if (from.getSecretRef() != null) {
                add(missing, NO_CREDENTIALS, where + ": envFrom secret " + from.getSecretRef().getName());
            }
        }
        for (ContainerPort port : nonNull(container.getPorts())) {
            if (port.getHostPort() != null && port.getHostPort() != 0) {
                add(missing, NO_HOST_PORTS, where + ": hostPort " + port.getHostPort());
            }
        }
        Map<String, Quantity> limits = container.getResources() == null || container.getResources().getLimits() == null
                ? Map.of() : container.getResources().getLimits();
        List<String> absent = LIMITS.stream().filter(l -> !limits.containsKey(l)).toList();
        if (!absent.isEmpty()) {
            add(missing, RESOURCE_LIMITS, where + ": no limit on " + String.join(", ", absent));
        }
    }

    /** One line per missing setting, for an exception message or a log line: {@code SETTING (where; where)}. */
    static String describe(Map<PodHardening, List<String>> missing) {
        List<String> lines = new ArrayList<>();
        missing.forEach((setting, where) -> lines.add(setting + " (" + String.join("; ", where) + ")"));
        return String.join(", ", lines);
    }

    static void add(Map<PodHardening, List<String>> missing, PodHardening setting, String where) {
        missing.computeIfAbsent(setting, s -> new ArrayList<>()).add(where);
    }

    private static <T> List<T> nonNull(List<T> list) {
        return list == null ? List.of() : list;
    }
}
