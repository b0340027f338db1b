package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What only a real cluster shows (profile {@code kubernetes-cluster}; see {@link ClusterTesting}): the kubelet and the
 * runtime apply the pod spec (non-root, no capabilities, no privilege escalation, seccomp, read-only root), and the
 * CNI enforces the NetworkPolicy. Each check pairs the blocked attempt with the positive control of the same run.
 */
class KubernetesClusterIT {

    private static KubernetesEngine engine;
    private static Workspace ws;

    @BeforeAll
    static void start() {
        ClusterTesting.requireCluster();
        engine = ClusterTesting.engine().build();
        ws = engine.manager().createWorkspace("cluster", WorkspacePolicy.DEFAULT);
    }

    @AfterAll
    static void stop() {
        if (engine != null) {
            engine.close();
        }
    }

    private static RunResult sh(String script, String... args) {
        java.util.List<String> a = new java.util.ArrayList<>(java.util.List.of("-c", script, "sh"));
        a.addAll(java.util.List.of(args));
        return engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args(a)
                .timeout(Duration.ofMinutes(2)).build());
    }

    @Test
    void should_run_as_the_non_root_user_without_capabilities_and_with_seccomp() {
        RunResult r = sh("id -u; grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status");
        assertThat(r.stdout()).startsWith(engine.podTemplate().uid() + "\n")
                .contains("CapEff:\t0000000000000000").contains("CapBnd:\t0000000000000000")
                .contains("NoNewPrivs:\t1").contains("Seccomp:\t2");
    }

    @Test
    void should_keep_the_root_file_system_read_only_and_the_workspace_writable() {
        RunResult r = sh("touch /etc/codeexec-probe 2>/dev/null && echo root-writable; touch work/probe && echo ok");
        assertThat(r.stdout()).isEqualTo("ok\n");
    }

    @Test
    void should_reach_neither_the_api_server_nor_the_internet_where_the_cni_enforces_network_policy() {
        String host = ClusterTesting.apiServerHost();
        RunResult r = sh("python3 - \"$1\" <<'EOF'\n"
                + "import socket, sys\n"
                + "for h, p in ((sys.argv[1], 443), ('1.1.1.1', 443)):\n"
                + "    try:\n"
                + "        socket.create_connection((h, p), timeout=5).close(); print('reached', h)\n"
                + "    except OSError as e:\n"
                + "        print('blocked', h)\n"
                + "EOF", host);
        assertThat(r.stdout()).doesNotContain("reached");
        assertThat(r.stdout()).contains("blocked");
    }
}
