package dev.codeexec.samples.analyst;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;

/**
 * Whether a Kubernetes cluster is configured for the sample, decided the way fabric8's client finds one, before a
 * client is made: a kubeconfig file ({@code KUBECONFIG}, else {@code ~/.kube/config}), a master URL
 * ({@code KUBERNETES_MASTER}), or the service account of a pod ({@code KUBERNETES_SERVICE_HOST}). fabric8 itself cannot
 * say "nothing": with nothing configured it falls back to {@code https://kubernetes.default.svc}, and the sample would
 * fail much later with a connection error instead of telling the user what to set.
 */
final class KubernetesCluster {

    private KubernetesCluster() {
    }

    /**
     * Where the cluster comes from, in words ("the kubeconfig ~/.kube/config"), or empty when none is configured.
     *
     * @param env  the environment variables
     * @param home the user's home folder ({@code user.home}, where fabric8 looks for {@code .kube/config})
     */
    static Optional<String> find(Map<String, String> env, Path home) {
        String kubeconfig = env.get("KUBECONFIG");
        if (kubeconfig != null && !kubeconfig.isBlank()) {
            // A list of files, like kubectl's; fabric8 reads the ones that exist, and ignores ~/.kube/config then.
            boolean any = Arrays.stream(kubeconfig.split(File.pathSeparator)).map(String::strip)
                    .filter(s -> !s.isEmpty()).anyMatch(s -> Files.isRegularFile(Path.of(s)));
            if (any) {
                return Optional.of("the kubeconfig of KUBECONFIG");
            }
        } else if (Files.isRegularFile(home.resolve(".kube").resolve("config"))) {
            return Optional.of("the kubeconfig ~/.kube/config");
        }
        if (set(env, "KUBERNETES_MASTER")) {
            return Optional.of("the API server of KUBERNETES_MASTER");
        }
        if (set(env, "KUBERNETES_SERVICE_HOST")) {
            return Optional.of("this pod's service account (in-cluster)");
        }
        return Optional.empty();
    }

    /** Why no cluster is configured, in one sentence naming what was looked at. */
    static String missing(Map<String, String> env) {
        String kubeconfig = set(env, "KUBECONFIG") ? "none of the files KUBECONFIG names exists"
                : "KUBECONFIG is not set and ~/.kube/config does not exist";
        return "no Kubernetes cluster is configured: " + kubeconfig + ", and this is not a pod in a cluster "
                + "(KUBERNETES_SERVICE_HOST is not set)";
    }

    private static boolean set(Map<String, String> env, String name) {
        String v = env.get(name);
        return v != null && !v.isBlank();
    }
}
