package dev.codeexec.kubernetes;

import io.fabric8.kubernetes.client.Config;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/**
 * The real cluster of the {@code kubernetes-cluster} profile: the current kubeconfig (or the in-cluster service
 * account), the namespace {@code CODEEXEC_K8S_NAMESPACE} (default the context's) and the image
 * {@code CODEEXEC_K8S_IMAGE}, which the cluster must be able to pull. Without them every cluster test is skipped
 * with the reason printed: never reported as passed.
 */
final class ClusterTesting {

    private ClusterTesting() {
    }

    /** Skips the calling test, saying why, unless a cluster and an image are configured. */
    static void requireCluster() {
        String kubeconfig = System.getenv("KUBECONFIG");
        boolean configured = (kubeconfig != null && !kubeconfig.isBlank())
                || Files.isRegularFile(Path.of(System.getProperty("user.home"), ".kube", "config"))
                || System.getenv("KUBERNETES_SERVICE_HOST") != null;
        String reason = !configured ? "no Kubernetes cluster configured (KUBECONFIG, ~/.kube/config or in-cluster)"
                : System.getenv("CODEEXEC_K8S_IMAGE") == null ? "CODEEXEC_K8S_IMAGE is not set (an image the cluster "
                + "can pull, with sh, GNU tar and python3)" : null;
        if (reason != null) {
            System.out.println("SKIPPED: Kubernetes cluster tests: " + reason);
        }
        Assumptions.assumeTrue(reason == null, reason);
    }

    /** An engine on the configured cluster. */
    static KubernetesEngine.Builder engine() {
        KubernetesEngine.Builder b = KubernetesEngine.builder().image(System.getenv("CODEEXEC_K8S_IMAGE"));
        String ns = System.getenv("CODEEXEC_K8S_NAMESPACE");
        if (ns != null && !ns.isBlank()) {
            b.namespace(ns);
        }
        String runtimeClass = System.getenv("CODEEXEC_K8S_RUNTIME_CLASS");
        if (runtimeClass != null && !runtimeClass.isBlank()) {
            b.runtimeClassName(runtimeClass);
        }
        return b;
    }

    /** The API server's host, for the network test. */
    static String apiServerHost() {
        return java.net.URI.create(Config.autoConfigure(null).getMasterUrl()).getHost();
    }
}
