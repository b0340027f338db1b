package dev.codeexec.e2b;

import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.codeexec.engine.EgressControl;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.network.EgressPolicy;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An egress policy on the wire: the exact {@code allow_internet_access} and {@code network} of E2B's
 * {@code POST /sandboxes} ({@code NewSandbox}, with {@code SandboxNetworkConfig}'s {@code allowOut} and
 * {@code denyOut}), the engine's capabilities, and refusals before any request.
 */
class E2bEgressWireTest extends WireFixture {

    /** Creates a workspace (one sandbox) with {@code policy} and returns the body of the one creation request. */
    private JsonNode createdWith(EgressPolicy policy) {
        stubs.sandbox();
        engine = stubs.engine().egress(policy).build();
        engine.manager().createWorkspace("egress", WorkspacePolicy.DEFAULT);
        List<LoggedRequest> creates = server.findAll(postRequestedFor(urlEqualTo("/sandboxes")));
        assertThat(creates).hasSize(1);
        return Json.parse(creates.get(0).getBody(), "NewSandbox");
    }

    private static void assertNetwork(JsonNode body, boolean internet, String network) {
        assertThat(body.get("allow_internet_access").isBoolean()).isTrue();
        assertThat(body.get("allow_internet_access").booleanValue()).isEqualTo(internet);
        assertThat(body.get("network")).isEqualTo(Json.parse(network.getBytes(StandardCharsets.UTF_8), "expected"));
    }

    @Test
    void should_send_names_and_patterns_as_allow_out_behind_a_deny_of_all_traffic() {
        JsonNode body = createdWith(EgressPolicy.allowing("pypi.org", "*.pythonhosted.org"));

        assertNetwork(body, true, "{\"allowOut\":[\"pypi.org\",\"*.pythonhosted.org\"],\"denyOut\":[\"0.0.0.0/0\"]}");
        assertThat(body.get("templateID").asText()).isEqualTo(E2bEngine.DEFAULT_TEMPLATE);
        assertThat(engine.describe().egressControl()).isEqualTo(EgressControl.PROVIDER);
        assertThat(engine.describe().networkAllowed()).isTrue();
    }

    @Test
    void should_send_allowed_ranges_as_allow_out_and_denied_ranges_as_deny_out() {
        JsonNode body = createdWith(EgressPolicy.builder().allow("1.1.1.1:*").allow("93.184.215.0/24:*")
                .deny("8.8.4.0/24").build());

        assertNetwork(body, true, "{\"allowOut\":[\"1.1.1.1\",\"93.184.215.0/24\"],"
                + "\"denyOut\":[\"8.8.4.0/24\",\"0.0.0.0/0\"]}");
    }

    @Test
    void should_send_a_deny_list_policy_as_its_denied_and_the_non_public_ranges() {
        JsonNode body = createdWith(EgressPolicy.builder().allowOthers().deny("45.33.32.0/24").build());

        assertNetwork(body, true, "{\"denyOut\":[\"45.33.32.0/24\",\"10.0.0.0/8\",\"100.64.0.0/10\","
                + "\"127.0.0.0/8\",\"169.254.0.0/16\",\"172.16.0.0/12\",\"192.0.0.0/24\",\"192.0.2.0/24\","
                + "\"192.168.0.0/16\",\"198.18.0.0/15\",\"198.51.100.0/24\",\"203.0.113.0/24\",\"224.0.0.0/4\","
                + "\"240.0.0.0/4\"]}");
        assertThat(engine.describe().networkAllowed()).isTrue();
    }

    @Test
    void should_send_deny_all_as_no_internet_access() {
        JsonNode body = createdWith(EgressPolicy.denyAll());

        assertNetwork(body, false, "{\"denyOut\":[\"0.0.0.0/0\"]}");
        assertThat(engine.describe().egressControl()).isEqualTo(EgressControl.PROVIDER);
        assertThat(engine.describe().networkAllowed()).isFalse();
    }

    @Test
    void should_send_no_network_section_and_claim_no_egress_control_without_a_policy() {
        stubs.sandbox();
        engine = stubs.engine().build();
        engine.manager().createWorkspace("egress", WorkspacePolicy.DEFAULT);
        JsonNode body = Json.parse(server.findAll(postRequestedFor(urlEqualTo("/sandboxes"))).get(0).getBody(),
                "NewSandbox");

        assertThat(body.has("network")).isFalse();
        assertThat(body.get("allow_internet_access").booleanValue()).isFalse();
        assertThat(engine.describe().egressControl()).isEqualTo(EgressControl.NONE);
        assertThatThrownBy(() -> engine.describe().requireEgressControl(engine.name()))
                .isInstanceOf(UnsupportedCapabilityException.class);
    }

    @Test
    void should_refuse_a_rule_e2b_cannot_express_at_build_before_any_request() {
        stubs.sandbox();

        assertThatThrownBy(() -> stubs.engine().egress(EgressPolicy.builder().allow("pypi.org")
                .deny("evil.pypi.org").build()).build())
                .isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageContaining("'deny evil.pypi.org'");
        assertThat(server.getAllServeEvents()).isEmpty();
    }

    @Test
    void should_refuse_a_policy_together_with_internet_access() {
        assertThatThrownBy(() -> stubs.engine().internetAccess(true).egress(EgressPolicy.allowing("pypi.org"))
                .build())
                .isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("internetAccess(true) and an egress policy (allow pypi.org) are both set");
        assertThat(server.getAllServeEvents()).isEmpty();
    }

    @Test
    void should_refuse_a_policy_for_a_shared_sandbox_it_did_not_create() {
        stubs.sandbox();

        assertThatThrownBy(() -> stubs.engine().sharedSandbox(WireStubs.ID).egress(EgressPolicy.denyAll()).build())
                .isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageContaining("cannot be held for the shared sandbox '" + WireStubs.ID + "'");
        assertThat(server.getAllServeEvents()).isEmpty();
    }
}
