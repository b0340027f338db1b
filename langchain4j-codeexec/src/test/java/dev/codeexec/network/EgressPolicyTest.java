package dev.codeexec.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.network.EgressDecision.Verdict;
import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EgressPolicyTest {

    private static EgressTarget connect(String host, int port) {
        return new EgressTarget(host, port, EgressTarget.Kind.CONNECT);
    }

    private static List<InetAddress> at(String... literals) {
        return java.util.Arrays.stream(literals).map(IpRange::addressOf).toList();
    }

    @Test
    void an_allowed_name_on_a_public_address_is_allowed_and_the_decision_names_the_rule() {
        EgressPolicy p = EgressPolicy.allowing("pypi.org");
        EgressDecision d = p.decide(connect("PyPI.org.", 443), at("151.101.0.223"));
        assertThat(d.verdict()).isEqualTo(Verdict.ALLOWED);
        assertThat(d.ruleText()).isEqualTo("allow pypi.org");
    }

    @Test
    void a_name_no_rule_covers_is_unknown_and_the_message_lists_what_is_allowed() {
        EgressPolicy p = EgressPolicy.allowing("pypi.org", "files.pythonhosted.org");
        EgressDecision d = p.screen(connect("example.org", 443));
        assertThat(d.verdict()).isEqualTo(Verdict.UNKNOWN);
        assertThat(d.reason()).isEqualTo("egress to example.org:443 is not allowed by the policy; allowed: pypi.org, "
                + "files.pythonhosted.org");
    }

    @Test
    void a_wildcard_matches_sub_domains_but_not_the_domain_itself_nor_a_lookalike() {
        EgressPolicy p = EgressPolicy.allowing("*.pythonhosted.org");
        assertThat(p.screen(connect("files.pythonhosted.org", 443)).verdict()).isEqualTo(Verdict.ALLOWED);
        assertThat(p.screen(connect("a.b.pythonhosted.org", 443)).verdict()).isEqualTo(Verdict.ALLOWED);
        assertThat(p.screen(connect("pythonhosted.org", 443)).verdict()).isEqualTo(Verdict.UNKNOWN);
        assertThat(p.screen(connect("evilpythonhosted.org", 443)).verdict()).isEqualTo(Verdict.UNKNOWN);
    }

    @Test
    void an_allow_rule_without_ports_covers_80_and_443_only_and_another_port_of_a_named_host_is_refused() {
        EgressPolicy p = EgressPolicy.allowing("pypi.org", "git.example.com:9418", "api.example.com:8000-8100",
                "any.example.com:*");
        assertThat(p.screen(connect("pypi.org", 80)).verdict()).isEqualTo(Verdict.ALLOWED);
        assertThat(p.screen(connect("pypi.org", 443)).verdict()).isEqualTo(Verdict.ALLOWED);
        assertThat(p.screen(connect("pypi.org", 22)).verdict()).isEqualTo(Verdict.DENIED);
        assertThat(p.screen(connect("pypi.org", 22)).reason()).contains("allows pypi.org only as 'pypi.org'");
        assertThat(p.screen(connect("git.example.com", 9418)).verdict()).isEqualTo(Verdict.ALLOWED);
        assertThat(p.screen(connect("git.example.com", 443)).verdict()).isEqualTo(Verdict.DENIED);
        assertThat(p.screen(connect("api.example.com", 8050)).verdict()).isEqualTo(Verdict.ALLOWED);
        assertThat(p.screen(connect("api.example.com", 8101)).verdict()).isEqualTo(Verdict.DENIED);
        assertThat(p.screen(connect("any.example.com", 5432)).verdict()).isEqualTo(Verdict.ALLOWED);
    }

    @Test
    void a_scheme_limits_the_kind_of_connection() {
        EgressPolicy p = EgressPolicy.allowing("https://secure.example.com", "http://plain.example.com");
        assertThat(p.screen(connect("secure.example.com", 443)).verdict()).isEqualTo(Verdict.ALLOWED);
        assertThat(p.screen(new EgressTarget("secure.example.com", 443, EgressTarget.Kind.HTTP)).verdict())
                .isEqualTo(Verdict.DENIED);
        assertThat(p.screen(connect("secure.example.com", 80)).verdict()).isEqualTo(Verdict.DENIED);
        assertThat(p.screen(new EgressTarget("plain.example.com", 80, EgressTarget.Kind.HTTP)).verdict())
                .isEqualTo(Verdict.ALLOWED);
        assertThat(p.screen(connect("plain.example.com", 80)).verdict()).isEqualTo(Verdict.DENIED);
    }

    @Test
    void a_deny_rule_without_ports_covers_every_port() {
        EgressPolicy p = EgressPolicy.builder().deny("paste.example").allowOthers().build();
        for (int port : new int[] {22, 80, 443, 8443}) {
            assertThat(p.screen(connect("paste.example", port)).verdict()).as("port %d", port)
                    .isEqualTo(Verdict.DENIED);
        }
        assertThat(p.screen(connect("other.example", 8443)).verdict()).isEqualTo(Verdict.ALLOWED);
    }

    @ParameterizedTest
    @ValueSource(strings = {"64:ff9b::a00:5", "64:ff9b::7f00:1", "::127.0.0.1", "2002:a9fe:a9fe::1", "fec0::1"})
    void ipv6_addresses_that_carry_a_non_public_ipv4_address_are_non_public(String address) {
        assertThat(IpRange.isNonPublic(IpRange.addressOf(address))).isTrue();
        EgressPolicy p = EgressPolicy.allowAll();
        assertThat(p.decide(connect("cdn.example", 443), at(address)).verdict()).isEqualTo(Verdict.DENIED);
    }

    @Test
    void ipv6_addresses_that_carry_a_public_ipv4_address_stay_public() {
        assertThat(IpRange.isNonPublic(IpRange.addressOf("64:ff9b::9765:df"))).isFalse(); // 151.101.0.223
        assertThat(IpRange.isNonPublic(IpRange.addressOf("2a04:4e42::223"))).isFalse();
    }

    @ParameterizedTest
    @ValueSource(strings = {"999.1.1.1", "256.0.0.1", "1.2.3.4.5"})
    void strings_that_only_look_like_ipv4_are_names_and_never_looked_up_as_literals(String text) {
        assertThat(IpRange.isLiteral(text)).isFalse();
    }

    @Test
    void deny_wins_over_allow_whatever_the_order() {
        EgressPolicy p = EgressPolicy.builder().allow("*.example.com").deny("secret.example.com").build();
        EgressPolicy q = EgressPolicy.builder().deny("secret.example.com").allow("*.example.com").build();
        for (EgressPolicy policy : List.of(p, q)) {
            assertThat(policy.screen(connect("secret.example.com", 443)).verdict()).isEqualTo(Verdict.DENIED);
            assertThat(policy.screen(connect("www.example.com", 443)).verdict()).isEqualTo(Verdict.ALLOWED);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "169.254.169.254", "10.1.2.3", "172.16.0.1", "192.168.1.1", "100.64.0.1",
        "0.0.0.0", "::1", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254"})
    void an_allowed_name_resolving_to_a_non_public_address_is_denied(String address) {
        EgressPolicy p = EgressPolicy.allowing("pypi.org");
        EgressDecision d = p.decide(connect("pypi.org", 443), at(address));
        assertThat(d.verdict()).isEqualTo(Verdict.DENIED);
        assertThat(d.reason()).contains("non-public address");
    }

    @Test
    void one_non_public_address_among_public_ones_denies_the_name() {
        EgressPolicy p = EgressPolicy.allowing("pypi.org");
        assertThat(p.decide(connect("pypi.org", 443), at("151.101.0.223", "127.0.0.1")).verdict())
                .isEqualTo(Verdict.DENIED);
    }

    @Test
    void an_address_rule_allows_a_non_public_address_for_a_name_and_for_the_literal() {
        EgressPolicy p = EgressPolicy.allowing("db.internal:5432", "10.0.0.0/8:5432");
        assertThat(p.decide(connect("db.internal", 5432), at("10.1.2.3")).verdict()).isEqualTo(Verdict.ALLOWED);
        assertThat(p.decide(connect("10.9.9.9", 5432), at("10.9.9.9")).verdict()).isEqualTo(Verdict.ALLOWED);
        assertThat(p.decide(connect("db.internal", 5432), at("192.168.0.1")).verdict()).isEqualTo(Verdict.DENIED);
        assertThat(p.decide(connect("10.9.9.9", 22), at("10.9.9.9")).verdict()).isEqualTo(Verdict.DENIED);
    }

    @Test
    void an_ip_literal_is_never_matched_by_a_name_rule() {
        EgressPolicy p = EgressPolicy.allowing("pypi.org");
        assertThat(p.screen(connect("151.101.0.223", 443)).verdict()).isEqualTo(Verdict.UNKNOWN);
        assertThat(p.screen(connect("2a04:4e42::223", 443)).verdict()).isEqualTo(Verdict.UNKNOWN);
    }

    @Test
    void a_deny_range_refuses_an_allowed_name_that_resolves_into_it() {
        EgressPolicy p = EgressPolicy.builder().allow("cdn.example.com").deny("203.0.113.0/24").allowOthers().build();
        assertThat(p.decide(connect("cdn.example.com", 443), at("198.51.100.7")).verdict())
                .isEqualTo(Verdict.DENIED); // documentation range: non-public
        EgressPolicy q = EgressPolicy.builder().allow("cdn.example.com").deny("151.101.0.0/16").build();
        EgressDecision d = q.decide(connect("cdn.example.com", 443), at("151.101.0.223"));
        assertThat(d.verdict()).isEqualTo(Verdict.DENIED);
        assertThat(d.ruleText()).isEqualTo("deny 151.101.0.0/16");
    }

    @Test
    void a_deny_list_policy_allows_others_but_not_non_public_addresses() {
        EgressPolicy p = EgressPolicy.builder().deny("*.evil.example").allowOthers().build();
        assertThat(p.screen(connect("x.evil.example", 443)).verdict()).isEqualTo(Verdict.DENIED);
        assertThat(p.decide(connect("ok.example", 443), at("151.101.0.223")).verdict()).isEqualTo(Verdict.ALLOWED);
        assertThat(p.decide(connect("ok.example", 443), at("169.254.169.254")).verdict()).isEqualTo(Verdict.DENIED);
        assertThat(EgressPolicy.allowAll().decide(connect("10.0.0.1", 80), at("10.0.0.1")).verdict())
                .isEqualTo(Verdict.DENIED);
    }

    @Test
    void narrowing_only_tightens() {
        EgressPolicy engine = EgressPolicy.allowing("pypi.org", "files.pythonhosted.org");
        EgressPolicy narrowed = engine.narrowedBy(EgressPolicy.allowing("pypi.org", "example.org"));
        assertThat(narrowed.screen(connect("pypi.org", 443)).verdict()).isEqualTo(Verdict.ALLOWED);
        // What the narrower does not allow is refused outright: no approver widens a narrowed policy.
        assertThat(narrowed.screen(connect("files.pythonhosted.org", 443)).verdict()).isEqualTo(Verdict.DENIED);
        assertThat(narrowed.screen(connect("files.pythonhosted.org", 443)).reason())
                .contains("is not allowed by the narrowed policy");
        assertThat(narrowed.screen(connect("example.org", 443)).verdict()).isEqualTo(Verdict.UNKNOWN);
        EgressPolicy denying = engine.narrowedBy(EgressPolicy.builder().deny("pypi.org").allowOthers().build());
        assertThat(denying.screen(connect("pypi.org", 443)).verdict()).isEqualTo(Verdict.DENIED);
        assertThat(denying.screen(connect("files.pythonhosted.org", 443)).verdict()).isEqualTo(Verdict.ALLOWED);
        assertThat(EgressPolicy.allowAll().narrowedBy(EgressPolicy.denyAll()).screen(connect("a.example", 443))
                .verdict()).isEqualTo(Verdict.DENIED);
    }

    @ParameterizedTest
    @ValueSource(strings = {"*", "*.com", "ex*ample.com", "pypi.org/simple", "user@pypi.org", "ftp://pypi.org",
        "pypi.org:0", "pypi.org:70000", "pypi.org:", "pypi.org:9-1", "10.0.0.0/33", "[fd00::1",
        "bad_host!.example", ""})
    void a_malformed_rule_is_refused_with_its_text(String rule) {
        assertThatThrownBy(() -> EgressRule.allow(rule)).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("egress rule");
    }

    @Test
    void rules_in_brackets_and_ranges_parse() {
        assertThat(EgressRule.allow("[fd00::1]:443").addressRange()).hasValue(IpRange.parse("fd00::1"));
        assertThat(EgressRule.allow("[fc00::/7]").addressRange()).hasValue(IpRange.parse("fc00::/7"));
        assertThat(EgressRule.deny("10.0.0.0/8:5432").coversPort(5432)).isTrue();
        assertThat(EgressRule.allow("Example.COM.").hostPattern()).hasValue("example.com");
        assertThat(EgressRule.allow("*.example.com:*").coversAllPorts()).isTrue();
    }
}
