package dev.codeexec.kubernetes;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.PolicyViolationException;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link SandboxClaims} against fabric8's mock API server in CRUD mode, with {@link FakeSandboxController} playing
 * the agent-sandbox controller. Every wait is on a condition (the claim's watch); the only timeout that expires is in
 * the test where nothing will ever make the claim ready.
 */
@EnableKubernetesMockClient(crud = true)
class SandboxClaimsTest {

    static final String NS = "codeexec";
    static final Map<String, String> LABELS = Map.of("codeexec.dev/engine", "e1", "codeexec.dev/workspace", "w1");
    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-06T04:00:00Z"), ZoneOffset.UTC);

    KubernetesClient client;

    SandboxClaims claims(SandboxClaimSettings settings) {
        return new SandboxClaims(client, NS, settings, CLOCK);
    }

    FakeSandboxController controller(BiConsumer<FakeSandboxController, GenericKubernetesResource> behaviour) {
        return new FakeSandboxController(client, NS, behaviour);
    }

    List<GenericKubernetesResource> storedClaims(FakeSandboxController controller) {
        return controller.claims().list().getItems();
    }

    @Test
    void should_store_the_exact_claim_when_claiming_with_a_lifecycle() throws Exception {
        AtomicReference<GenericKubernetesResource> seenByController = new AtomicReference<>();
        SandboxClaimSettings settings = new SandboxClaimSettings("python-pool", null, null, Duration.ofHours(1), 60,
                null, null, false);
        try (FakeSandboxController controller = controller((c, claim) -> {
            seenByController.set(claim);
            c.adopt(claim, "python-pool-abcde", "python-pool-abcde-pod",
                    FakeSandboxController.hardenedSpec("workspace", null));
        })) {
            ClaimedSandbox claimed = claims(settings).claim(LABELS, List.of());

            GenericKubernetesResource stored = seenByController.get();
            assertThat(stored.getApiVersion()).isEqualTo("extensions.agents.x-k8s.io/v1beta1");
            assertThat(stored.getKind()).isEqualTo("SandboxClaim");
            assertThat(stored.getMetadata().getName()).isEqualTo(claimed.claimName()).matches("codeexec-[a-z0-9]{10}");
            assertThat(stored.getMetadata().getNamespace()).isEqualTo(NS);
            assertThat(stored.getMetadata().getLabels()).isEqualTo(LABELS);
            Map<String, Object> lifecycle = new LinkedHashMap<>();
            lifecycle.put("shutdownTime", "2026-12-06T05:00:00Z");
            lifecycle.put("ttlSecondsAfterFinished", 60);
            lifecycle.put("shutdownPolicy", "Delete");
            assertThat(stored.getAdditionalProperties().get("spec"))
                    .isEqualTo(Map.of("warmPoolRef", Map.of("name", "python-pool"), "lifecycle", lifecycle));
            assertThat(storedClaims(controller)).extracting(c -> c.getMetadata().getName())
                    .containsExactly(claimed.claimName());
        }
    }

    @Test
    void should_store_no_lifecycle_when_none_is_configured() {
        GenericKubernetesResource claim = claims(SandboxClaimSettings.of("pool")).claimObject("codeexec-x", LABELS, List.of());

        assertThat(claim.getAdditionalProperties().get("spec")).isEqualTo(Map.of("warmPoolRef", Map.of("name", "pool")));
    }

    @Test
    void should_return_the_annotated_pod_when_the_controller_adopts_a_warm_sandbox() throws Exception {
        try (FakeSandboxController controller = controller((c, claim) -> c.adopt(claim,
                "pool-abcde", "pool-abcde-7xk2p", FakeSandboxController.hardenedSpec("workspace", null)))) {
            ClaimedSandbox claimed = claims(SandboxClaimSettings.of("pool")).claim(LABELS, List.of());

            assertThat(claimed.sandboxName()).isEqualTo("pool-abcde");
            assertThat(claimed.podName()).isEqualTo("pool-abcde-7xk2p");
            assertThat(claimed.container()).isEqualTo("workspace");
            assertThat(claimed.claimUid()).isNotBlank();
            assertThat(claimed.missingHardening()).isEmpty();
        }
    }

    @Test
    void should_find_the_pod_by_the_claim_uid_label_when_the_sandbox_has_no_pod_name_annotation() throws Exception {
        try (FakeSandboxController controller = controller((c, claim) -> {
            c.createPod("decoy", null, FakeSandboxController.hardenedSpec("workspace", null));
            c.createPod("cold-pod-1", claim.getMetadata().getUid(), FakeSandboxController.hardenedSpec("workspace", null));
            c.createSandbox(claim, "cold-sandbox", null);
            c.setReady(claim, "True", "DependenciesReady", "Pod is Ready", "cold-sandbox");
        })) {
            ClaimedSandbox claimed = claims(SandboxClaimSettings.of("pool")).claim(LABELS, List.of());

            assertThat(claimed.podName()).isEqualTo("cold-pod-1");
        }
    }

    @Test
    void should_keep_waiting_when_ready_is_false_with_a_transient_reason() throws Exception {
        try (FakeSandboxController controller = controller((c, claim) -> {
            c.setReady(claim, "False", "SandboxNotReady", "Sandbox is not ready", null);
            c.adopt(claim, "sb", "sb-pod", FakeSandboxController.hardenedSpec("workspace", null));
        })) {
            ClaimedSandbox claimed = claims(SandboxClaimSettings.of("pool")).claim(LABELS, List.of());

            assertThat(claimed.podName()).isEqualTo("sb-pod");
        }
    }

    @Test
    void should_throw_a_typed_refusal_and_delete_the_claim_when_ready_is_false_with_a_terminal_reason() throws Exception {
        try (FakeSandboxController controller = controller((c, claim) -> c.setReady(claim, "False",
                "WarmPoolNotFound", "SandboxWarmPool \"missing-pool\" not found", null))) {

            assertThatThrownBy(() -> claims(SandboxClaimSettings.of("missing-pool")).claim(LABELS, List.of()))
                    .isInstanceOfSatisfying(SandboxClaimRefusedException.class, e -> {
                        assertThat(e.reason()).isEqualTo("WarmPoolNotFound");
                        assertThat(e.detail()).isEqualTo("SandboxWarmPool \"missing-pool\" not found");
                        assertThat(e).hasMessageContaining("WarmPoolNotFound")
                                .hasMessageContaining("SandboxWarmPool \"missing-pool\" not found");
                    });
            assertThat(storedClaims(controller)).isEmpty();
        }
    }

    @Test
    void should_throw_a_typed_refusal_when_the_claim_is_deleted_while_waiting() throws Exception {
        try (FakeSandboxController controller = controller((c, claim) ->
                c.claims().withName(claim.getMetadata().getName()).delete())) {

            assertThatThrownBy(() -> claims(SandboxClaimSettings.of("pool")).claim(LABELS, List.of()))
                    .isInstanceOfSatisfying(SandboxClaimRefusedException.class,
                            e -> assertThat(e.reason()).isEqualTo("ClaimDeleted"));
            assertThat(storedClaims(controller)).isEmpty();
        }
    }

    /**
     * A race by design: the interrupt lands while the create's answer is awaited or while the claim's watch is
     * awaited. Either way the safe outcome is the same: a typed exception, the interrupt flag kept, no claim left.
     */
    @Test
    void should_delete_the_claim_and_keep_the_interrupt_when_the_caller_is_interrupted_while_claiming()
            throws Exception {
        SandboxClaimSettings settings = new SandboxClaimSettings("pool", null, Duration.ofMinutes(1), null, null,
                null, null, false);
        CountDownLatch seen = new CountDownLatch(1);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean interruptKept = new AtomicBoolean();
        try (FakeSandboxController controller = controller((c, claim) -> seen.countDown())) {
            Thread caller = new Thread(() -> {
                try {
                    claims(settings).claim(LABELS, List.of());
                } catch (Throwable t) {
                    thrown.set(t);
                }
                interruptKept.set(Thread.currentThread().isInterrupted());
            }, "claiming-caller");
            caller.start();
            seen.await();
            caller.interrupt();
            caller.join();

            assertThat(thrown.get()).isInstanceOf(CodeExecException.class);
            assertThat(interruptKept).isTrue();
            assertThat(storedClaims(controller)).isEmpty();
        }
    }

    @Test
    void should_time_out_and_delete_the_claim_when_nothing_makes_it_ready() throws Exception {
        SandboxClaimSettings settings = new SandboxClaimSettings("pool", null, Duration.ofMillis(300), null, null,
                null, null, false);
        try (FakeSandboxController controller = controller((c, claim) -> { })) {

            assertThatThrownBy(() -> claims(settings).claim(LABELS, List.of()))
                    .isInstanceOf(BackendUnavailableException.class)
                    .isNotInstanceOf(SandboxClaimRefusedException.class)
                    .hasMessageContaining("was not ready within PT0.3S")
                    .hasMessageContaining("warm pool pool");
            assertThat(storedClaims(controller)).isEmpty();
        }
    }

    @Test
    void should_say_why_the_claims_pod_is_not_ready_when_a_timeout_is_explained() throws Exception {
        try (FakeSandboxController controller = controller((c, claim) -> { })) {
            controller.createPod("sb-pod", "uid-1", FakeSandboxController.hardenedSpec("workspace", null));
            controller.setPodWaiting("sb-pod", "workspace", "ImagePullBackOff", "Back-off pulling image");
            SandboxClaims claims = claims(SandboxClaimSettings.of("pool"));

            assertThat(claims.podDiagnosis("uid-1"))
                    .isEqualTo("; pod sb-pod container workspace waiting: ImagePullBackOff Back-off pulling image");
            assertThat(claims.podDiagnosis("uid-2")).isEmpty();
        }
    }

    @Test
    void should_refuse_and_report_each_missing_setting_when_the_claimed_pod_is_not_hardened() throws Exception {
        try (FakeSandboxController controller = controller((c, claim) -> c.adopt(claim, "sb", "sb-pod",
                FakeSandboxController.plainSpec("agent")))) {

            assertThatThrownBy(() -> claims(SandboxClaimSettings.of("pool")).claim(LABELS, List.of()))
                    .isInstanceOf(PolicyViolationException.class)
                    .hasMessageContaining("pod sb-pod from warm pool pool lacks hardened settings")
                    .hasMessageContaining("RUN_AS_NON_ROOT (container agent: runAsNonRoot=null, runAsUser=null)")
                    .hasMessageContaining("NO_PRIVILEGE_ESCALATION").hasMessageContaining("DROP_ALL_CAPABILITIES")
                    .hasMessageContaining("READ_ONLY_ROOT_FILESYSTEM").hasMessageContaining("SECCOMP_RUNTIME_DEFAULT")
                    .hasMessageContaining("NO_SERVICE_ACCOUNT_TOKEN");
            assertThat(storedClaims(controller)).isEmpty();
        }
    }

    @Test
    void should_return_the_pod_with_its_missing_settings_when_the_template_is_accepted_as_is() throws Exception {
        SandboxClaimSettings asIs = new SandboxClaimSettings("pool", null, null, null, null, null, "gvisor", true);
        try (FakeSandboxController controller = controller((c, claim) -> c.adopt(claim, "sb", "sb-pod",
                FakeSandboxController.plainSpec("agent")))) {
            ClaimedSandbox claimed = claims(asIs).claim(LABELS, List.of());

            assertThat(claimed.podName()).isEqualTo("sb-pod");
            assertThat(claimed.container()).isEqualTo("agent");
            assertThat(claimed.missingHardening().keySet()).containsExactly(PodHardening.RUN_AS_NON_ROOT,
                    PodHardening.NO_PRIVILEGE_ESCALATION, PodHardening.DROP_ALL_CAPABILITIES,
                    PodHardening.READ_ONLY_ROOT_FILESYSTEM, PodHardening.SECCOMP_RUNTIME_DEFAULT,
                    PodHardening.NO_SERVICE_ACCOUNT_TOKEN, PodHardening.RESOURCE_LIMITS, PodHardening.NO_CLUSTER_DNS,
                    PodHardening.RUNTIME_CLASS);
            assertThat(storedClaims(controller)).hasSize(1);
        }
    }

    @Test
    void should_refuse_a_pod_labelled_for_another_claim_even_when_the_template_is_accepted_as_is() throws Exception {
        SandboxClaimSettings asIs = new SandboxClaimSettings("pool", null, null, null, null, null, null, true);
        try (FakeSandboxController controller = controller((c, claim) -> {
            c.createPod("someone-elses-pod", "another-claims-uid", FakeSandboxController.hardenedSpec("workspace", null));
            c.createSandbox(claim, "sb", "someone-elses-pod");
            c.setReady(claim, "True", "DependenciesReady", "Pod is Ready", "sb");
        })) {

            assertThatThrownBy(() -> claims(asIs).claim(LABELS, List.of()))
                    .isInstanceOf(PolicyViolationException.class)
                    .hasMessageContaining("is labelled for another claim");
            assertThat(storedClaims(controller)).isEmpty();
        }
    }

    @Test
    void should_exec_into_the_configured_or_default_container_when_the_pod_has_several() throws Exception {
        PodSpec twoContainers = FakeSandboxController.hardenedSpec("sidecar", null);
        twoContainers.getContainers().add(FakeSandboxController.hardenedSpec("workspace", null).getContainers().get(0));
        SandboxClaimSettings named = new SandboxClaimSettings("pool", null, null, null, null, "workspace", null, false);
        try (FakeSandboxController controller = controller((c, claim) -> c.adopt(claim,
                "sb-" + claim.getMetadata().getName(), "pod-" + claim.getMetadata().getName(), twoContainers))) {

            assertThat(claims(named).claim(LABELS, List.of()).container()).isEqualTo("workspace");
            assertThat(claims(SandboxClaimSettings.of("pool")).claim(LABELS, List.of()).container()).isEqualTo("sidecar");
        }
    }

    @Test
    void should_delete_the_claim_when_released_and_accept_a_second_release() throws Exception {
        try (FakeSandboxController controller = controller((c, claim) -> c.adopt(claim, "sb", "sb-pod",
                FakeSandboxController.hardenedSpec("workspace", null)))) {
            SandboxClaims claims = claims(SandboxClaimSettings.of("pool"));
            ClaimedSandbox claimed = claims.claim(LABELS, List.of());
            assertThat(storedClaims(controller)).hasSize(1);

            claims.release(claimed.claimName());
            claims.release(claimed.claimName());

            assertThat(storedClaims(controller)).isEmpty();
        }
    }

    @Test
    void should_pass_the_installation_check_when_the_claim_resource_is_served() {
        claims(SandboxClaimSettings.of("pool")).requireInstalled();
    }
}
