package dev.codeexec.spring;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.kubernetes.KubernetesEngine;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.regex.Pattern;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * {@code codeexec.backend=kubernetes}; loaded only when the kubernetes module is present, so that an application
 * without it never links against fabric8. The cluster is the application's {@link KubernetesClient} bean when it has
 * one (the engine does not close it; the context does), else the engine's own client from the kubeconfig or the
 * in-cluster service account.
 */
final class KubernetesBackend {

    static final String PREFIX = "codeexec.kubernetes.";

    /** A DNS-1123 label: what Kubernetes accepts as a namespace's name. */
    private static final Pattern LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
    /** A DNS-1123 subdomain: what Kubernetes accepts as the name of most objects (a RuntimeClass, a warm pool). */
    private static final Pattern SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
            + "[a-z0-9])?)*");

    private KubernetesBackend() {
    }

    /**
     * @param beans   where the application's {@link KubernetesClient} bean is looked up
     * @param network the egress policy of {@code codeexec.network.*} and its proxy, or {@link NetworkSettings#NONE}:
     *                the pods keep no network and reach the hosts it allows through the engine's proxy, over exec
     * @throws InvalidConfigurationPropertyValueException without an image, or for a value out of range
     * @throws IllegalStateException                      when the context has two clients and none is primary, or the
     *                                                    cluster refused a request at start-up
     */
    static KubernetesEngine create(KubernetesProperties p, ArtifactService artifacts, BeanFactory beans,
                                   NetworkSettings network) {
        KubernetesEngine.Builder b = builder(p, artifacts, client(beans));
        if (network.hasPolicy()) {
            b.egress(network.policy()).egressProxy(network.proxy());
        }
        try {
            return b.build();
        } catch (KubernetesClientException e) {
            throw new IllegalStateException("codeexec.backend=kubernetes: the engine could not start: "
                    + e.getMessage(), e);
        }
    }

    /** The application's client, or null: the engine then makes its own. Two without a primary one are an error. */
    static KubernetesClient client(BeanFactory beans) {
        try {
            return beans.getBeanProvider(KubernetesClient.class).getIfAvailable();
        } catch (NoUniqueBeanDefinitionException e) {
            throw new IllegalStateException("the context has " + e.getNumberOfBeansFound() + " KubernetesClient beans "
                    + e.getBeanNamesFound() + ", and codeexec.backend=kubernetes takes one: mark one @Primary", e);
        }
    }

    /**
     * The builder the properties describe, not yet built: the seam the tests read the settings through.
     *
     * @param client the application's client, or null
     */
    static KubernetesEngine.Builder builder(KubernetesProperties p, ArtifactService artifacts,
                                            KubernetesClient client) {
        if (blank(p.getImage())) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + "image", p.getImage(), "the kubernetes "
                    + "backend needs the workspace image, which the cluster pulls as it is configured to (the engine "
                    + "never does): set it to an image with sh, tar and the tools programs use, for example a copy of "
                    + "codeexec-python:bookworm in the cluster's registry");
        }
        KubernetesEngine.Builder b = KubernetesEngine.builder().image(p.getImage().strip()).artifactService(artifacts)
                .acceptUnhardenedSandbox(p.isAcceptUnhardenedSandbox()).sweepLeftovers(p.isSweepLeftovers())
                .acceptOtherNetworkPolicies(p.isAcceptOtherNetworkPolicies());
        if (client != null) {
            if (!blank(p.getContext())) {
                throw new InvalidConfigurationPropertyValueException(PREFIX + "context", p.getContext(), "the "
                        + "context has a KubernetesClient bean, which the engine uses, and its configuration names "
                        + "the cluster: remove codeexec.kubernetes.context, or configure the bean for that context");
            }
            b.client(client);
        } else if (!blank(p.getContext())) {
            b.context(p.getContext().strip());
        }
        if (!blank(p.getNamespace())) {
            b.namespace(name("namespace", p.getNamespace(), LABEL, 63));
        }
        if (p.getMemoryBytes() != null) {
            b.memoryBytes(positive("memory-bytes", p.getMemoryBytes()));
        }
        if (p.getCpus() != null) {
            if (!(p.getCpus() > 0) || p.getCpus().isInfinite()) {
                throw new InvalidConfigurationPropertyValueException(PREFIX + "cpus", p.getCpus(), "must be positive");
            }
            b.cpus(p.getCpus());
        }
        if (p.getWorkspaceBytes() != null) {
            b.workspaceBytes(positive("workspace-bytes", p.getWorkspaceBytes()));
        }
        if (!blank(p.getRuntimeClassName())) {
            b.runtimeClassName(name("runtime-class-name", p.getRuntimeClassName(), SUBDOMAIN, 253));
        }
        if (p.getReadyTimeout() != null) {
            b.readyTimeout(positive("ready-timeout", p.getReadyTimeout()));
        }
        if (p.getTtl() != null) {
            b.ttl(positive("ttl", p.getTtl()));
        }
        if (p.getWarmPool() != null) {
            if (p.getWarmPool() < 0) {
                throw new InvalidConfigurationPropertyValueException(PREFIX + "warm-pool", p.getWarmPool(),
                        "must not be negative (0 keeps no ready pods)");
            }
            b.warmPool(p.getWarmPool());
        }
        if (!blank(p.getAgentSandbox())) {
            b.agentSandbox(name("agent-sandbox", p.getAgentSandbox(), SUBDOMAIN, 253));
        }
        return b;
    }

    /** {@code value} stripped, when it is a name Kubernetes accepts; else the property's error. */
    private static String name(String property, String value, Pattern rule, int maxLength) {
        String v = value.strip();
        if (v.length() > maxLength || !rule.matcher(v).matches()) {
            String chars = rule == SUBDOMAIN ? "lower-case letters, digits, '-' and '.'"
                    : "lower-case letters, digits and '-'";
            throw new InvalidConfigurationPropertyValueException(PREFIX + property, value, "must be a Kubernetes name: "
                    + "at most " + maxLength + " " + chars + ", starting and ending with a letter or digit");
        }
        return v;
    }

    private static long positive(String property, long value) {
        if (value < 1) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + property, value, "must be positive");
        }
        return value;
    }

    private static Duration positive(String property, Duration value) {
        if (value.isNegative() || value.isZero()) {
            throw new InvalidConfigurationPropertyValueException(PREFIX + property, value, "must be positive");
        }
        return value;
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}
