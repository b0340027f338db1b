package dev.codeexec.samples.analyst;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Whether a cluster is configured, against fake environments and home folders: each way fabric8 finds one. */
class KubernetesClusterTest {

    @TempDir
    Path home;

    @TempDir
    Path elsewhere;

    private Path homeKubeconfig() throws IOException {
        Path config = Files.createDirectories(home.resolve(".kube")).resolve("config");
        return Files.writeString(config, "apiVersion: v1\nkind: Config\n");
    }

    @Test
    void should_find_no_cluster_when_nothing_is_configured() {
        assertThat(KubernetesCluster.find(Map.of(), home)).isEmpty();
        assertThat(KubernetesCluster.find(Map.of("KUBECONFIG", " ", "KUBERNETES_SERVICE_HOST", ""), home)).isEmpty();
        assertThat(KubernetesCluster.missing(Map.of())).isEqualTo("no Kubernetes cluster is configured: KUBECONFIG "
                + "is not set and ~/.kube/config does not exist, and this is not a pod in a cluster "
                + "(KUBERNETES_SERVICE_HOST is not set)");
    }

    @Test
    void should_find_the_kubeconfig_in_the_home_folder_when_kubeconfig_is_not_set() throws IOException {
        homeKubeconfig();
        assertThat(KubernetesCluster.find(Map.of(), home)).contains("the kubeconfig ~/.kube/config");
    }

    @Test
    void should_find_a_file_kubeconfig_names_among_several() throws IOException {
        Path config = Files.writeString(elsewhere.resolve("dev.yaml"), "apiVersion: v1\nkind: Config\n");
        String list = elsewhere.resolve("missing.yaml") + File.pathSeparator + config;
        assertThat(KubernetesCluster.find(Map.of("KUBECONFIG", list), home)).contains("the kubeconfig of KUBECONFIG");
    }

    /** As fabric8 does: a KUBECONFIG is used instead of ~/.kube/config, so files it names that are missing count. */
    @Test
    void should_find_no_cluster_when_kubeconfig_names_only_missing_files_even_with_a_home_kubeconfig()
            throws IOException {
        homeKubeconfig();
        Map<String, String> env = Map.of("KUBECONFIG", elsewhere.resolve("missing.yaml").toString());
        assertThat(KubernetesCluster.find(env, home)).isEmpty();
        assertThat(KubernetesCluster.missing(env)).contains("none of the files KUBECONFIG names exists");
        assertThat(KubernetesCluster.find(Map.of("KUBECONFIG", elsewhere.toString()), home))
                .as("a folder is no kubeconfig").isEmpty();
    }

    @Test
    void should_find_the_service_account_of_a_pod_or_an_explicit_master() {
        assertThat(KubernetesCluster.find(Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1"), home))
                .contains("this pod's service account (in-cluster)");
        assertThat(KubernetesCluster.find(Map.of("KUBERNETES_MASTER", "https://127.0.0.1:6443"), home))
                .contains("the API server of KUBERNETES_MASTER");
    }
}
