package dev.codeexec.kubernetes;

import dev.codeexec.engine.InvalidSpecException;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Toleration;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a workspace pod looks like: the operator's choices (namespace, image, limits, scheduling, egress) for the pod
 * the engine creates per workspace. The hardening itself (non-root, read-only root, no capabilities, no token, seccomp)
 * is not a choice: {@link PodSpecs} always applies it. Immutable; build one with {@link #builder()}, adjust one with
 * {@link #toBuilder()}.
 *
 * <p>The engine never pulls the image: the cluster's kubelet does, per {@link Builder#imagePullPolicy} (the cluster's
 * default when unset) with {@link Builder#imagePullSecrets}. Quantities use Kubernetes' notation ({@code 500m},
 * {@code 1Gi}); each request must not exceed its limit.
 *
 * <p>Egress: without {@link Builder#egressProxy} the workspace pods can reach nothing (where the cluster's network
 * plugin enforces NetworkPolicy). With it, they reach only the proxy, by address (the pods have no DNS, the proxy
 * resolves names), and through it whatever the proxy forwards to: its rules are the operator's, the engine does not
 * check them, and its {@code describe()} says {@code networkAllowed}.
 */
public final class PodTemplate {

    /** The {@code PATH} of a workspace container unless {@link Builder#env} sets another. */
    public static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    private static final Set<String> PULL_POLICIES = Set.of("Always", "IfNotPresent", "Never");
    /** Variables the engine sets itself: the workspace as home, the proxy's address. */
    private static final Set<String> RESERVED_ENV = Set.of("HOME", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
            "https_proxy", "NO_PROXY", "no_proxy");

    private final String namespace;
    private final String image;
    private final String imagePullPolicy;
    private final List<String> imagePullSecrets;
    private final long uid;
    private final long gid;
    private final Map<String, Quantity> limits;
    private final Map<String, Quantity> requests;
    private final Quantity workspaceSize;
    private final Quantity tmpSize;
    private final String runtimeClassName;
    private final Map<String, String> nodeSelector;
    private final List<Toleration> tolerations;
    private final Map<String, String> labels;
    private final Map<String, String> annotations;
    private final Duration activeDeadline;
    private final Map<String, String> env;
    private final EgressProxy egressProxy;

    /**
     * The egress proxy the workspace pods may reach.
     *
     * @param host       its address, an IP literal (the Service's ClusterIP): the pods cannot resolve names
     * @param port       its port
     * @param podLabels  the labels of the proxy's own pods, or empty; with network plugins that apply policies after
     *                   a Service's address was translated to a pod's (most do), only a rule on the pods matches
     * @param namespace  the proxy pods' namespace, or null for the workspace pods' own
     * @param targetPort the port the proxy pods listen on (the Service's targetPort)
     */
    public record EgressProxy(String host, int port, Map<String, String> podLabels, String namespace, int targetPort) {

        /** The proxy URL the workspace container's {@code HTTP_PROXY} and {@code HTTPS_PROXY} carry. */
        public String url() {
            return "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        }
    }

    private PodTemplate(Builder b) {
        this.namespace = b.namespace;
        if (namespace != null && !PodTemplateChecks.DNS_LABEL.matcher(namespace).matches()) {
            throw new InvalidSpecException("namespace '" + namespace + "' is not a valid namespace name");
        }
        if (b.image == null || b.image.isBlank()) {
            throw new InvalidSpecException("image must be set: the operator chooses the workspace image");
        }
        if (b.image.chars().anyMatch(Character::isWhitespace)) {
            throw new InvalidSpecException("image '" + b.image + "' must not contain white space");
        }
        this.image = b.image;
        if (b.imagePullPolicy != null && !PULL_POLICIES.contains(b.imagePullPolicy)) {
            throw new InvalidSpecException("imagePullPolicy '" + b.imagePullPolicy + "' must be one of "
                    + "Always, IfNotPresent, Never");
        }
        this.imagePullPolicy = b.imagePullPolicy;
        this.imagePullSecrets = List.copyOf(b.imagePullSecrets);
        imagePullSecrets.forEach(s -> PodTemplateChecks.requireName("imagePullSecrets", s));
        this.uid = b.uid == null ? PodLayout.DEFAULT_UID : b.uid;
        this.gid = b.gid == null ? uid : b.gid;
        if (uid <= 0 || gid <= 0) {
            throw new InvalidSpecException("user (" + uid + ":" + gid + ") must be positive ids: a workspace never "
                    + "runs as root");
        }
        this.limits = PodTemplateChecks.resources("limit", b.cpuLimit, "1", b.memoryLimit, "1Gi", b.ephemeralLimit, "2Gi");
        this.requests = PodTemplateChecks.resources("request", b.cpuRequest, "250m", b.memoryRequest, "256Mi", b.ephemeralRequest,
                "256Mi");
        for (String r : limits.keySet()) {
            if (PodTemplateChecks.amount(requests.get(r)).compareTo(PodTemplateChecks.amount(limits.get(r))) > 0) {
                throw new InvalidSpecException(r + " request (" + requests.get(r) + ") must not exceed its limit ("
                        + limits.get(r) + ")");
            }
        }
        this.workspaceSize = PodTemplateChecks.quantity("workspaceSizeLimit", b.workspaceSize, "512Mi");
        this.tmpSize = PodTemplateChecks.quantity("tmpSizeLimit", b.tmpSize, "64Mi");
        this.runtimeClassName = b.runtimeClassName;
        if (runtimeClassName != null) {
            PodTemplateChecks.requireName("runtimeClassName", runtimeClassName);
        }
        this.nodeSelector = PodTemplateChecks.labels("nodeSelector", b.nodeSelector, false);
        this.tolerations = List.copyOf(b.tolerations);
        this.labels = PodTemplateChecks.labels("labels", b.labels, true);
        this.annotations = Map.copyOf(b.annotations);
        annotations.keySet().forEach(k -> PodTemplateChecks.labelKey("annotations", k, true));
        this.activeDeadline = b.activeDeadline == null ? Duration.ofHours(12) : b.activeDeadline;
        if (activeDeadline.toSeconds() < 1) {
            throw new InvalidSpecException("activeDeadline (" + activeDeadline + ") must be at least one second");
        }
        Map<String, String> e = new LinkedHashMap<>();
        e.put("PATH", DEFAULT_PATH);
        b.env.forEach((k, v) -> {
            if (!PodTemplateChecks.ENV_NAME.matcher(k).matches() || RESERVED_ENV.contains(k)) {
                throw new InvalidSpecException("env '" + k + "' cannot be set: " + (RESERVED_ENV.contains(k)
                        ? "the engine sets it" : "not a variable name"));
            }
            e.put(k, Objects.requireNonNull(v, "env value"));
        });
        this.env = java.util.Collections.unmodifiableMap(e);
        this.egressProxy = b.egressProxy;
    }

    /** A builder with every setting at its default; only {@link Builder#image} must be set. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this template's settings. */
    public Builder toBuilder() {
        Builder b = new Builder().namespace(namespace).image(image).imagePullPolicy(imagePullPolicy)
                .imagePullSecrets(imagePullSecrets).user(uid, gid)
                .cpu(requests.get("cpu").toString(), limits.get("cpu").toString())
                .memory(requests.get("memory").toString(), limits.get("memory").toString())
                .ephemeralStorage(requests.get("ephemeral-storage").toString(),
                        limits.get("ephemeral-storage").toString())
                .workspaceSizeLimit(workspaceSize.toString()).tmpSizeLimit(tmpSize.toString())
                .runtimeClassName(runtimeClassName).nodeSelector(nodeSelector).tolerations(tolerations)
                .labels(labels).annotations(annotations).activeDeadline(activeDeadline);
        Map<String, String> e = new LinkedHashMap<>(env);
        b.env(e);
        b.egressProxy = egressProxy;
        return b;
    }

    /** The namespace, or null for the client's own (its kubeconfig context's, or the service account's). */
    public String namespace() {
        return namespace;
    }

    public String image() {
        return image;
    }

    /** {@code Always}, {@code IfNotPresent}, {@code Never}, or null for the cluster's default. */
    public String imagePullPolicy() {
        return imagePullPolicy;
    }

    public List<String> imagePullSecrets() {
        return imagePullSecrets;
    }

    public long uid() {
        return uid;
    }

    public long gid() {
        return gid;
    }

    /** {@code cpu}, {@code memory} and {@code ephemeral-storage} limits. */
    public Map<String, Quantity> limits() {
        return limits;
    }

    /** {@code cpu}, {@code memory} and {@code ephemeral-storage} requests. */
    public Map<String, Quantity> requests() {
        return requests;
    }

    public Quantity workspaceSizeLimit() {
        return workspaceSize;
    }

    public Quantity tmpSizeLimit() {
        return tmpSize;
    }

    /** The RuntimeClass ({@code gvisor}, {@code kata}), or null for the cluster's default runtime. */
    public String runtimeClassName() {
        return runtimeClassName;
    }

    public Map<String, String> nodeSelector() {
        return nodeSelector;
    }

    public List<Toleration> tolerations() {
        return tolerations;
    }

    /** Labels added to each pod besides the engine's own. */
    public Map<String, String> labels() {
        return labels;
    }

    public Map<String, String> annotations() {
        return annotations;
    }

    /** The pod's wall-clock cap ({@code activeDeadlineSeconds}), also the age past which the sweeper deletes it. */
    public Duration activeDeadline() {
        return activeDeadline;
    }

    /**
     * The pods' environment besides {@code HOME} and the proxy variables, {@code PATH} first: the container's, and the
     * base of every run's (under the engine's environment policy and the run's own variables) unless the run asks for a
     * clean environment.
     */
    public Map<String, String> env() {
        return env;
    }

    /** The egress proxy, or null: no egress at all. */
    public EgressProxy egressProxy() {
        return egressProxy;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PodTemplate t && uid == t.uid && gid == t.gid && Objects.equals(namespace, t.namespace)
                && image.equals(t.image) && Objects.equals(imagePullPolicy, t.imagePullPolicy)
                && imagePullSecrets.equals(t.imagePullSecrets) && limits.equals(t.limits)
                && requests.equals(t.requests) && workspaceSize.equals(t.workspaceSize) && tmpSize.equals(t.tmpSize)
                && Objects.equals(runtimeClassName, t.runtimeClassName) && nodeSelector.equals(t.nodeSelector)
                && tolerations.equals(t.tolerations) && labels.equals(t.labels) && annotations.equals(t.annotations)
                && activeDeadline.equals(t.activeDeadline) && env.equals(t.env)
                && Objects.equals(egressProxy, t.egressProxy);
    }

    @Override
    public int hashCode() {
        return Objects.hash(namespace, image, imagePullPolicy, imagePullSecrets, uid, gid, limits, requests,
                workspaceSize, tmpSize, runtimeClassName, nodeSelector, tolerations, labels, annotations,
                activeDeadline, env, egressProxy);
    }

    @Override
    public String toString() {
        return "PodTemplate{namespace=" + namespace + ", image=" + image + ", imagePullPolicy=" + imagePullPolicy
                + ", user=" + uid + ":" + gid + ", requests=" + requests + ", limits=" + limits + ", workspace="
                + workspaceSize + ", tmp=" + tmpSize + ", runtimeClassName=" + runtimeClassName + ", nodeSelector="
                + nodeSelector + ", tolerations=" + tolerations.size() + ", labels=" + labels + ", activeDeadline="
                + activeDeadline + ", env=" + env.keySet() + ", egressProxy=" + egressProxy + "}";
    }

    /** Collects a template's settings; null fields take their defaults when {@link #build()} validates them. */
    public static final class Builder {
        private String namespace;
        private String image;
        private String imagePullPolicy;
        private List<String> imagePullSecrets = List.of();
        private Long uid;
        private Long gid;
        private String cpuLimit;
        private String cpuRequest;
        private String memoryLimit;
        private String memoryRequest;
        private String ephemeralLimit;
        private String ephemeralRequest;
        private String workspaceSize;
        private String tmpSize;
        private String runtimeClassName;
        private Map<String, String> nodeSelector = Map.of();
        private List<Toleration> tolerations = List.of();
        private Map<String, String> labels = Map.of();
        private Map<String, String> annotations = Map.of();
        private Duration activeDeadline;
        private Map<String, String> env = Map.of();
        private EgressProxy egressProxy;

        private Builder() {
        }

        /** The namespace of the pods; default: the client's namespace. */
        public Builder namespace(String namespace) {
            this.namespace = namespace;
            return this;
        }

        /** The workspace image (required). It needs {@code sh}, {@code sleep} and {@code tar}. */
        public Builder image(String image) {
            this.image = image;
            return this;
        }

        /** {@code Always}, {@code IfNotPresent} or {@code Never}; default: unset, the cluster decides. */
        public Builder imagePullPolicy(String policy) {
            this.imagePullPolicy = policy;
            return this;
        }

        /** Names of Secrets in the pods' namespace the kubelet pulls the image with; default none. */
        public Builder imagePullSecrets(List<String> secrets) {
            this.imagePullSecrets = List.copyOf(secrets);
            return this;
        }

        /** The user and group of every process; default {@value PodLayout#DEFAULT_UID} for both; never 0. */
        public Builder user(long uid, long gid) {
            this.uid = uid;
            this.gid = gid;
            return this;
        }

        /** CPU request and limit; default {@code 250m} and {@code 1}. */
        public Builder cpu(String request, String limit) {
            this.cpuRequest = request;
            this.cpuLimit = limit;
            return this;
        }

        /** Memory request and limit; default {@code 256Mi} and {@code 1Gi}. Past the limit, the kernel kills. */
        public Builder memory(String request, String limit) {
            this.memoryRequest = request;
            this.memoryLimit = limit;
            return this;
        }

        /** Ephemeral-storage request and limit; default {@code 256Mi} and {@code 2Gi}. Past it, the kubelet evicts. */
        public Builder ephemeralStorage(String request, String limit) {
            this.ephemeralRequest = request;
            this.ephemeralLimit = limit;
            return this;
        }

        /** The size limit of the workspace's {@code emptyDir}; default {@code 512Mi}. */
        public Builder workspaceSizeLimit(String size) {
            this.workspaceSize = size;
            return this;
        }

        /** The size limit of {@code /tmp}'s {@code emptyDir}; default {@code 64Mi}. */
        public Builder tmpSizeLimit(String size) {
            this.tmpSize = size;
            return this;
        }

        /** A RuntimeClass for stronger isolation ({@code gvisor}, {@code kata}); default none. */
        public Builder runtimeClassName(String runtimeClassName) {
            this.runtimeClassName = runtimeClassName;
            return this;
        }

        /** Node labels the pods must be scheduled on; default none. */
        public Builder nodeSelector(Map<String, String> nodeSelector) {
            this.nodeSelector = Map.copyOf(nodeSelector);
            return this;
        }

        /** Taints the pods tolerate; default none. */
        public Builder tolerations(List<Toleration> tolerations) {
            this.tolerations = List.copyOf(tolerations);
            return this;
        }

        /** Extra labels on each pod; keys under {@value PodLabels#PREFIX} are the engine's and refused. */
        public Builder labels(Map<String, String> labels) {
            this.labels = Map.copyOf(labels);
            return this;
        }

        /** Extra annotations on each pod; keys under {@value PodLabels#PREFIX} are refused. */
        public Builder annotations(Map<String, String> annotations) {
            this.annotations = Map.copyOf(annotations);
            return this;
        }

        /** The pod's lifetime cap, after which the kubelet stops it and the sweeper deletes it; default 12 hours. */
        public Builder activeDeadline(Duration ttl) {
            this.activeDeadline = ttl;
            return this;
        }

        /**
         * Extra environment of the pods, which every run in them starts from; {@code PATH} defaults to
         * {@link #DEFAULT_PATH}; {@code HOME} and the proxy variables are the engine's and refused.
         */
        public Builder env(Map<String, String> env) {
            this.env = new LinkedHashMap<>(env);
            return this;
        }

        /**
         * The egress proxy: the one address the pods may reach, given to them and their runs as {@code HTTP_PROXY} and
         * {@code HTTPS_PROXY}. The proxy is the operator's: the engine does not check what it forwards to, and reports
         * {@code networkAllowed} for pods of a template with one. Default none: no egress.
         *
         * @param clusterIpAndPort the proxy Service's ClusterIP and port, {@code 10.96.0.20:3128} or
         *                         {@code [fd00::20]:3128}; an address, not a name, since the pods have no DNS
         */
        public Builder egressProxy(String clusterIpAndPort) {
            this.egressProxy = clusterIpAndPort == null ? null : PodTemplateChecks.parseProxy(clusterIpAndPort);
            return this;
        }

        /**
         * The proxy's own pods, which the NetworkPolicy allows besides its ClusterIP: most network plugins apply a
         * policy after the Service address was translated to a pod's. Call after {@link #egressProxy(String)}.
         *
         * @param podLabels  the proxy pods' labels
         * @param namespace  their namespace, or null for the workspace pods' own
         * @param targetPort the port they listen on
         */
        public Builder egressProxyPods(Map<String, String> podLabels, String namespace, int targetPort) {
            if (egressProxy == null) {
                throw new InvalidSpecException("egressProxyPods needs egressProxy(address) first");
            }
            if (podLabels.isEmpty() || targetPort < 1 || targetPort > 65535) {
                throw new InvalidSpecException("egressProxyPods needs labels and a port in 1..65535 (got "
                        + podLabels + ", " + targetPort + ")");
            }
            if (namespace != null && !PodTemplateChecks.DNS_LABEL.matcher(namespace).matches()) {
                throw new InvalidSpecException("egressProxyPods namespace '" + namespace + "' is not a valid name");
            }
            this.egressProxy = new EgressProxy(egressProxy.host(), egressProxy.port(),
                    PodTemplateChecks.labels("egressProxyPods", podLabels, false), namespace, targetPort);
            return this;
        }

        /** A validated, immutable template. @throws InvalidSpecException naming the first bad setting */
        public PodTemplate build() {
            return new PodTemplate(this);
        }
    }
}
