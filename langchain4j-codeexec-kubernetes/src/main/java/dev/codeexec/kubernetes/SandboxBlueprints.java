package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The agent-sandbox objects an operator applies so that the engine can claim pods as hardened as its own: a
 * {@code SandboxTemplate} wrapping a given pod spec (the engine's hardened one) and a {@code SandboxWarmPool} of it.
 * A pure function, so the YAML can be printed, reviewed and {@code kubectl apply}-ed; the engine itself never creates
 * templates or pools (that needs cluster-wide trust the engine should not have).
 *
 * <p>The template sets, beyond the pod: {@code networkPolicyManagement: Managed} with an explicit
 * {@code networkPolicy} of no ingress and no egress rules, which the controller turns into a deny-all policy (left
 * out, the controller's default allows egress to the public internet); {@code envVarsInjectionPolicy: Disallowed}
 * (a claim cannot change the environment, and every claim stays warm); {@code service: false} (exec needs no
 * Service). Every pod of the template carries {@value ClaimNetwork#NETWORK_LABEL}{@code =}{@value
 * ClaimNetwork#NETWORK_VALUE}, so the engine's own deny-all policy ({@link ClaimNetwork}) fences it from its start, not
 * only from its claim. A NetworkPolicy only holds where the cluster's CNI enforces it.
 *
 * @param template the {@code SandboxTemplate}
 * @param warmPool the {@code SandboxWarmPool} of it
 */
record SandboxBlueprints(GenericKubernetesResource template, GenericKubernetesResource warmPool) {

    /**
     * @param name       the warm pool's name; the template is {@code <name>-template}
     * @param namespace  their namespace (claims must be created in the same one)
     * @param apiVersion the version of the extensions group, for example {@value SandboxClaimSettings#DEFAULT_API_VERSION}
     * @param podLabels  labels for every sandbox pod; {@value ClaimNetwork#NETWORK_LABEL} is added to them
     * @param podSpec    the pod spec, normally the engine's hardened one
     * @param replicas   how many warm sandboxes to keep; at least 1
     */
    static SandboxBlueprints of(String name, String namespace, String apiVersion, Map<String, String> podLabels,
                                PodSpec podSpec, int replicas) {
        Objects.requireNonNull(podSpec, "podSpec");
        if (replicas < 1) {
            throw new IllegalArgumentException("replicas (" + replicas + ") must be at least 1");
        }
        String templateName = name + "-template";
        Map<String, Object> podTemplate = new LinkedHashMap<>();
        Map<String, String> labels = new LinkedHashMap<>(podLabels);
        labels.put(ClaimNetwork.NETWORK_LABEL, ClaimNetwork.NETWORK_VALUE);
        podTemplate.put("metadata", Map.of("labels", labels));
        podTemplate.put("spec", podSpec);
        Map<String, Object> templateSpec = new LinkedHashMap<>();
        templateSpec.put("podTemplate", podTemplate);
        templateSpec.put("service", false);
        templateSpec.put("networkPolicyManagement", "Managed");
        Map<String, Object> denyAll = new LinkedHashMap<>();
        denyAll.put("ingress", List.of());
        denyAll.put("egress", List.of());
        templateSpec.put("networkPolicy", denyAll);
        templateSpec.put("envVarsInjectionPolicy", "Disallowed");

        Map<String, Object> poolSpec = new LinkedHashMap<>();
        poolSpec.put("replicas", replicas);
        poolSpec.put("sandboxTemplateRef", Map.of("name", templateName));

        String extensions = SandboxClaims.EXTENSIONS_GROUP + "/" + apiVersion;
        return new SandboxBlueprints(object(extensions, "SandboxTemplate", templateName, namespace, templateSpec),
                object(extensions, "SandboxWarmPool", name, namespace, poolSpec));
    }

    /** Both objects as one YAML stream, template first, ready for {@code kubectl apply -f -}. */
    String toYaml() {
        KubernetesSerialization serialization = new KubernetesSerialization();
        return serialization.asYaml(template) + serialization.asYaml(warmPool);
    }

    private static GenericKubernetesResource object(String apiVersion, String kind, String name, String namespace,
                                                    Map<String, Object> spec) {
        GenericKubernetesResource object = new GenericKubernetesResource();
        object.setApiVersion(apiVersion);
        object.setKind(kind);
        object.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
        object.setAdditionalProperty("spec", spec);
        return object;
    }
}
