package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The SandboxTemplate and SandboxWarmPool generated from the engine's pod spec, as YAML an operator applies. */
@EnableKubernetesMockClient(crud = true)
class SandboxBlueprintsTest {

    KubernetesClient client;

    SandboxBlueprints blueprints() {
        return SandboxBlueprints.of("python-pool", "codeexec", "v1beta1", Map.of("app", "codeexec-sandbox"),
                FakeSandboxController.hardenedSpec("workspace", "gvisor"), 3);
    }

    @Test
    void should_generate_the_template_and_warm_pool_yaml_when_given_a_pod_spec() {
        assertThat(blueprints().toYaml()).isEqualTo("""
                ---
                apiVersion: "extensions.agents.x-k8s.io/v1beta1"
                kind: "SandboxTemplate"
                metadata:
                  name: "python-pool-template"
                  namespace: "codeexec"
                spec:
                  podTemplate:
                    metadata:
                      labels:
                        app: "codeexec-sandbox"
                        dev.codeexec/network: "none"
                    spec:
                      automountServiceAccountToken: false
                      containers:
                      - image: "python:3.12"
                        name: "workspace"
                        resources:
                          limits:
                            cpu: "1"
                            memory: "1Gi"
                            ephemeral-storage: "2Gi"
                        securityContext:
                          allowPrivilegeEscalation: false
                          capabilities:
                            drop:
                            - "ALL"
                          privileged: false
                          readOnlyRootFilesystem: true
                      dnsPolicy: "None"
                      runtimeClassName: "gvisor"
                      securityContext:
                        runAsNonRoot: true
                        runAsUser: 10001
                        seccompProfile:
                          type: "RuntimeDefault"
                  service: false
                  networkPolicyManagement: "Managed"
                  networkPolicy:
                    ingress: []
                    egress: []
                  envVarsInjectionPolicy: "Disallowed"
                ---
                apiVersion: "extensions.agents.x-k8s.io/v1beta1"
                kind: "SandboxWarmPool"
                metadata:
                  name: "python-pool"
                  namespace: "codeexec"
                spec:
                  replicas: 3
                  sandboxTemplateRef:
                    name: "python-pool-template"
                """);
    }

    @Test
    void should_read_back_as_the_same_objects_when_parsed_from_its_yaml() {
        SandboxBlueprints generated = blueprints();
        KubernetesSerialization serialization = new KubernetesSerialization();

        List<?> parsed = serialization.unmarshal(generated.toYaml());

        assertThat(parsed).hasSize(2);
        GenericKubernetesResource template = (GenericKubernetesResource) parsed.get(0);
        assertThat(template.<String>get("spec", "podTemplate", "spec", "runtimeClassName")).isEqualTo("gvisor");
        assertThat(template.<List<?>>get("spec", "networkPolicy", "egress")).isEmpty();
        GenericKubernetesResource pool = (GenericKubernetesResource) parsed.get(1);
        assertThat(pool.<Integer>get("spec", "replicas")).isEqualTo(3);
        assertThat(pool.<String>get("spec", "sandboxTemplateRef", "name")).isEqualTo(template.getMetadata().getName());
    }

    @Test
    void should_yield_a_claimable_pod_spec_with_nothing_missing_when_generated_from_a_hardened_spec() {
        GenericKubernetesResource template = blueprints().template();
        io.fabric8.kubernetes.api.model.PodSpec spec = new KubernetesSerialization().convertValue(
                template.get("spec", "podTemplate", "spec"), io.fabric8.kubernetes.api.model.PodSpec.class);

        assertThat(PodHardening.missingFrom(spec, null, "gvisor")).isEmpty();
    }
}
