package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A run's environment in a pod, end to end on the fake cluster (the real wrapper, {@code env -i}, over exec): the pod's
 * environment (the template's variables, its {@code PATH}, the operator's proxy) under the policy's and the run's,
 * and nothing of the JVM's host.
 */
class KubernetesRunEnvironmentIT {

    static final String PATH = "/opt/tools/bin:/usr/local/bin:/usr/bin:/bin";

    @BeforeAll
    static void requireCluster() {
        KubernetesTesting.requireCluster();
    }

    static PodTemplate template() {
        return PodTemplate.builder().image(KubernetesTesting.IMAGE)
                .env(Map.of("PATH", PATH, "PIP_INDEX_URL", "http://10.96.0.30/simple", "FOO", "from-template"))
                .egressProxy("10.96.0.20:3128").build();
    }

    static Map<String, String> envOf(KubernetesEngine engine, RunProgramSpec.Builder spec) {
        Workspace ws = engine.manager().createWorkspace("env", WorkspacePolicy.DEFAULT);
        try {
            RunResult r = engine.runner().runProgram(ws, spec.timeout(Duration.ofMinutes(2)).build());
            assertThat(r.exitCode()).as(r.stderr()).isZero();
            Map<String, String> env = new HashMap<>();
            for (String line : r.stdout().split("\n")) {
                int eq = line.indexOf('=');
                if (eq > 0) {
                    env.put(line.substring(0, eq), line.substring(eq + 1));
                }
            }
            return env;
        } finally {
            engine.manager().cleanup(ws);
        }
    }

    static RunProgramSpec.Builder env() {
        return RunProgramSpec.builder("env");
    }

    @Test
    void should_give_a_run_the_pods_environment_and_nothing_of_the_jvms_host() {
        try (KubernetesEngine engine = KubernetesTesting.engine().pod(template()).build()) {
            Map<String, String> env = envOf(engine, env());

            assertThat(env).containsEntry("PATH", PATH).containsEntry("FOO", "from-template")
                    .containsEntry("PIP_INDEX_URL", "http://10.96.0.30/simple")
                    .containsEntry("HTTPS_PROXY", "http://10.96.0.20:3128")
                    .containsEntry("http_proxy", "http://10.96.0.20:3128")
                    .containsEntry("HOME", PodLayout.ROOT + "/home");
            // Variables the default policy would take from a host: the JVM's must not reach the pod.
            for (String k : List.of("USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "TZ", "JAVA_HOME",
                    "MAVEN_OPTS")) {
                if (System.getenv(k) != null) {
                    assertThat(env).as("the JVM's %s", k).doesNotContainKey(k);
                }
            }
        }
    }

    @Test
    void should_lay_the_policys_and_the_runs_variables_over_the_pods() {
        try (KubernetesEngine engine = KubernetesTesting.engine().pod(template())
                .hostEnvironment(Map.of("TZ", "Europe/Paris", "API_TOKEN", "secret", "PATH", "/usr/bin:/bin")).build()) {
            Map<String, String> env = envOf(engine, env().env(Map.of("FOO", "from-run")));

            // the host environment given explicitly goes through the policy: core variables pass, secrets do not
            assertThat(env).containsEntry("TZ", "Europe/Paris").doesNotContainKey("API_TOKEN")
                    .containsEntry("FOO", "from-run").containsEntry("PIP_INDEX_URL", "http://10.96.0.30/simple")
                    .containsEntry("PATH", "/usr/bin:/bin");
        }
    }

    @Test
    void should_inherit_nothing_of_the_pod_when_a_run_asks_for_a_clean_environment() {
        try (KubernetesEngine engine = KubernetesTesting.engine().pod(template()).build()) {
            Map<String, String> env = envOf(engine, env().cleanEnv(true).env(Map.of("BAR", "1")));

            // the clean PATH every backend gives, which a command policy looks commands up along
            assertThat(env).containsEntry("PATH", ShellEnvironmentPolicy.CLEAN_PATH).containsEntry("BAR", "1")
                    .containsEntry("LANG", "C.UTF-8").doesNotContainKeys("FOO", "PIP_INDEX_URL", "HTTPS_PROXY");
        }
    }
}
