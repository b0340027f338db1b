package dev.codeexec.kubernetes;

import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.Isolation;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Claim mode's lifecycle ({@link ClaimKeeper}) against fabric8's mock API server in CRUD mode: the default lifetime of
 * a claim, its owner (the engine's Lease), the sweep of claims whose engine is gone, and what the engine claims in
 * {@link KubernetesEngine#describe()} in each claim mode.
 */
@EnableKubernetesMockClient(crud = true)
class ClaimKeeperTest {

    static final String NS = "codeexec";

    KubernetesClient client;

    KubernetesEngine.Builder claimMode() {
        return KubernetesEngine.builder().client(client).image("registry.example/python:3.12").namespace(NS)
                .agentSandbox("pool").sweepLeftovers(false);
    }

    ClaimKeeper keeper(String engineId) {
        PodTemplate template = PodTemplate.builder().image("registry.example/python:3.12").namespace(NS).build();
        return ClaimKeeper.open(client, NS, engineId, template, claimMode());
    }

    /** A stored claim of {@code engineId} (null: no engine label), as the engine creates it. */
    GenericKubernetesResource storeClaim(ClaimKeeper keeper, String name, String engineId, boolean owned) {
        Map<String, String> labels = new java.util.LinkedHashMap<>();
        if (owned) {
            labels.put(PodLabels.OWNER, PodLabels.OWNER_VALUE);
        }
        if (engineId != null) {
            labels.put(PodLabels.ENGINE, engineId);
        }
        return keeper.claims().claims().resource(keeper.claims().claimObject(name, labels, List.of())).create();
    }

    void storeLease(String engineId, ZonedDateTime renewed) {
        client.leases().inNamespace(NS).resource(new LeaseBuilder().withNewMetadata()
                .withName(EngineLease.name(engineId)).withLabels(PodLabels.engine(engineId)).endMetadata()
                .withNewSpec().withLeaseDurationSeconds(60).withRenewTime(renewed).withAcquireTime(renewed).endSpec()
                .build()).create();
    }

    List<String> storedClaims(ClaimKeeper keeper) {
        return keeper.claims().claims().list().getItems().stream().map(c -> c.getMetadata().getName()).sorted().toList();
    }

    @Test
    void should_give_each_claim_the_engines_lifetime_and_lease_as_owner_when_none_is_configured() {
        ClaimKeeper keeper = keeper("engine-a");
        try {
            Instant before = Instant.now().truncatedTo(ChronoUnit.SECONDS);
            GenericKubernetesResource claim = keeper.claims().claimObject("codeexec-x", keeper.labels("ws-1"),
                    List.of(keeper.ownerReference()));
            Instant after = Instant.now();

            Instant shutdown = Instant.parse(claim.get("spec", "lifecycle", "shutdownTime"));
            assertThat(shutdown).isBetween(before.plus(Duration.ofHours(12)), after.plus(Duration.ofHours(12)));
            assertThat(claim.<String>get("spec", "lifecycle", "shutdownPolicy")).isEqualTo("Delete");
            OwnerReference owner = claim.getMetadata().getOwnerReferences().get(0);
            assertThat(owner.getKind()).isEqualTo("Lease");
            assertThat(owner.getName()).isEqualTo(EngineLease.name("engine-a"));
            assertThat(client.leases().inNamespace(NS).withName(EngineLease.name("engine-a")).get()).isNotNull();
            assertThat(claim.getMetadata().getLabels()).containsEntry(PodLabels.OWNER, PodLabels.OWNER_VALUE)
                    .containsEntry(PodLabels.ENGINE, "engine-a").containsEntry(PodLabels.WORKSPACE, "ws-1");
        } finally {
            keeper.close();
        }
        assertThat(client.leases().inNamespace(NS).withName(EngineLease.name("engine-a")).get()).isNull();
    }

    @Test
    void should_delete_the_claims_of_engines_that_are_gone_and_keep_the_others_when_sweeping() {
        ClaimKeeper keeper = keeper("engine-a");
        try {
            storeLease("engine-live", EngineLease.now());
            storeLease("engine-expired", EngineLease.now().minusHours(1));
            storeClaim(keeper, "mine", "engine-a", true);
            storeClaim(keeper, "of-a-live-engine", "engine-live", true);
            storeClaim(keeper, "of-an-expired-engine", "engine-expired", true);
            storeClaim(keeper, "of-an-engine-without-lease", "engine-gone", true);
            storeClaim(keeper, "not-this-librarys", "engine-gone", false);

            int deleted = keeper.sweep();

            assertThat(deleted).isEqualTo(2);
            assertThat(storedClaims(keeper)).containsExactly("mine", "not-this-librarys", "of-a-live-engine");
            assertThat(client.leases().inNamespace(NS).withName(EngineLease.name("engine-expired")).get()).isNull();
            assertThat(client.leases().inNamespace(NS).withName(EngineLease.name("engine-live")).get()).isNotNull();
        } finally {
            keeper.close();
        }
    }

    @Test
    void should_claim_a_contained_pod_without_network_when_the_hardening_is_required() {
        try (KubernetesEngine engine = claimMode().build()) {
            Capabilities c = engine.describe();

            assertThat(c.isolation()).isEqualTo(Isolation.CONTAINER);
            assertThat(c.networkAllowed()).isFalse();
            assertThat(client.network().v1().networkPolicies().inNamespace(NS).withName(ClaimNetwork.POLICY_NAME)
                    .get()).isNotNull();
        }
    }

    @Test
    void should_claim_only_what_holds_whatever_the_template_says_when_it_is_accepted_as_is() {
        try (KubernetesEngine engine = claimMode().acceptUnhardenedSandbox(true).build()) {
            Capabilities c = engine.describe();

            assertThat(c.isolation()).isEqualTo(Isolation.EXTERNAL);
            assertThat(c.networkAllowed()).isTrue();
        }
    }
}
