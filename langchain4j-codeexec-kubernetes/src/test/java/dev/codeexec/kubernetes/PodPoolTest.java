package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class PodPoolTest {

    static final String NS = PodWorkspacesTest.NS;

    KubernetesMockServer server;
    KubernetesClient client;
    StatusSetter kubelet;

    @BeforeEach
    void start() {
        kubelet = new StatusSetter(client, NS);
    }

    @AfterEach
    void stop() {
        kubelet.close();
    }

    List<Pod> readyPool(String engine) {
        return client.pods().inNamespace(NS).withLabels(Map.of(PodLabels.ENGINE, engine, PodLabels.WORKSPACE,
                PodLabels.POOL)).list().getItems().stream().filter(PodFailures::ready).toList();
    }

    Pod stored(String name) {
        return client.pods().inNamespace(NS).withName(name).get();
    }

    @Test
    void should_hand_out_a_warm_pod_and_refill_the_pool_when_a_workspace_is_created() {
        try (PodWorkspaces ws = new PodWorkspaces(client, PodWorkspacesTest.TEMPLATE, "engine1",
                PodWorkspaces.Settings.defaults().withPoolSize(2))) {
            Await.until("two warm pods", () -> readyPool("engine1").size() == 2);
            Set<String> warm = new HashSet<>();
            readyPool("engine1").forEach(p -> warm.add(p.getMetadata().getName()));

            String name = ws.create("ws-1");

            assertThat(warm).contains(name);
            Pod adopted = stored(name);
            assertThat(adopted.getMetadata().getLabels()).containsEntry(PodLabels.WORKSPACE, "ws-1")
                    .containsEntry(PodLabels.ENGINE, "engine1");
            assertThat(adopted.getMetadata().getOwnerReferences()).containsExactly(ws.lease().ownerReference());
            Await.until("pool refilled", () -> readyPool("engine1").size() == 2);
            assertThat(readyPool("engine1")).extracting(p -> p.getMetadata().getName()).doesNotContain(name);

            ws.close();
            assertThat(client.pods().inNamespace(NS).withLabel(PodLabels.ENGINE, "engine1").list().getItems())
                    .as("close deletes the workspace's and the pool's pods").isEmpty();
        }
    }

    @Test
    void should_create_a_pod_when_the_pool_is_empty() {
        try (PodWorkspaces ws = new PodWorkspaces(client, PodWorkspacesTest.TEMPLATE, "engine1",
                PodWorkspaces.Settings.defaults())) {
            PodPool empty = new PodPool(ws, 0, "test");
            try {
                assertThat(empty.adopt("ws-1")).isEmpty();
            } finally {
                empty.close();
            }
        }
    }

    @Test
    void should_not_adopt_a_pooled_pod_of_another_template() {
        PodTemplate other = PodWorkspacesTest.TEMPLATE.toBuilder().memory("256Mi", "2Gi").build();
        try (PodWorkspaces a = new PodWorkspaces(client, PodWorkspacesTest.TEMPLATE, "enginea",
                PodWorkspaces.Settings.defaults());
             PodWorkspaces b = new PodWorkspaces(client, other, "engineb", PodWorkspaces.Settings.defaults())) {
            a.awaitReady(a.createPod(PodLabels.POOL));
            PodPool pool = new PodPool(b, 0, "b");
            try {
                assertThat(pool.adopt("ws-1")).isEmpty();
            } finally {
                pool.close();
            }
        }
    }

    @Test
    void should_never_give_one_pod_to_two_adopters_when_engines_race_for_the_pool() throws Exception {
        int rounds = 3;
        int conflicts = 0;
        for (int round = 0; round < rounds; round++) {
            conflicts += race(round);
        }
        // positive control: the adopters did compete for the same pods (and the losers moved on)
        assertThat(conflicts).as("409 conflicts over all rounds").isPositive();
    }

    /** Two engines of one template, three adopters each, three warm pods: one round; returns the conflicts seen. */
    private int race(int round) throws Exception {
        PodWorkspaces a = new PodWorkspaces(client, PodWorkspacesTest.TEMPLATE, "a" + round,
                PodWorkspaces.Settings.defaults());
        PodWorkspaces b = new PodWorkspaces(client, PodWorkspacesTest.TEMPLATE, "b" + round,
                PodWorkspaces.Settings.defaults());
        PodPool poolA = new PodPool(a, 0, "a");
        PodPool poolB = new PodPool(b, 0, "b");
        ExecutorService threads = Executors.newFixedThreadPool(6);
        try {
            for (int i = 0; i < 3; i++) {
                a.awaitReady(a.createPod(PodLabels.POOL));
            }
            CyclicBarrier start = new CyclicBarrier(6);
            List<Future<Optional<String>>> taken = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                PodPool pool = i % 2 == 0 ? poolA : poolB;
                String workspace = "r" + round + "-ws-" + i;
                taken.add(threads.submit(() -> {
                    start.await();
                    return pool.adopt(workspace);
                }));
            }
            Map<String, String> adopters = new java.util.HashMap<>();
            for (int i = 0; i < 6; i++) {
                Optional<String> name = taken.get(i).get();
                if (name.isPresent()) {
                    String previous = adopters.put(name.get(), "r" + round + "-ws-" + i);
                    assertThat(previous).as("pod %s given to two adopters", name.get()).isNull();
                }
            }
            // every warm pod went to exactly one adopter, and the stored pod says which
            assertThat(adopters).hasSize(3);
            adopters.forEach((pod, workspace) -> {
                Pod p = stored(pod);
                assertThat(p.getMetadata().getLabels()).containsEntry(PodLabels.WORKSPACE, workspace);
                int adopter = Integer.parseInt(workspace.substring(workspace.lastIndexOf('-') + 1));
                PodWorkspaces owner = adopter % 2 == 0 ? a : b;
                assertThat(p.getMetadata().getLabels()).containsEntry(PodLabels.ENGINE, owner.engineId);
                assertThat(p.getMetadata().getOwnerReferences()).containsExactly(owner.lease().ownerReference());
            });
            // closing the engine that made the pool keeps the pods the other engine adopted
            a.close();
            adopters.forEach((pod, workspace) -> {
                int adopter = Integer.parseInt(workspace.substring(workspace.lastIndexOf('-') + 1));
                assertThat(stored(pod) != null).as("pod %s after its maker closed", pod).isEqualTo(adopter % 2 == 1);
            });
            return poolA.conflicts.get() + poolB.conflicts.get();
        } finally {
            threads.shutdownNow();
            poolA.close();
            poolB.close();
            a.close();
            b.close();
        }
    }
}
