package dev.codeexec.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.IpRange;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An egress policy as E2B's allow and deny lists: what maps, and every rule kind E2B cannot hold as written, refused
 * with the rule and the reason rather than widened.
 */
class E2bEgressTest {

    /** {@link IpRange#NON_PUBLIC}'s IPv4 ranges E2B's API accepts (not 0.0.0.0/8), in its order. */
    static final List<String> NON_PUBLIC_V4 = List.of("10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8",
            "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15",
            "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4");

    private static void refused(EgressPolicy policy, String rule, String why) {
        assertThatThrownBy(() -> E2bEgress.of(policy)).isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageStartingWith("E2B cannot enforce the egress rule '" + rule + "': ")
                .hasMessageContaining(why);
    }

    // ------------------------------------------------------------------ what maps

    @Test
    void should_allow_names_and_patterns_and_deny_every_other_address() {
        E2bEgress e = E2bEgress.of(EgressPolicy.allowing("PyPI.org", "*.pythonhosted.org", "tcp://files.example.com",
                "pypi.org"));

        assertThat(e.allowOut()).containsExactly("pypi.org", "*.pythonhosted.org", "files.example.com");
        assertThat(e.denyOut()).containsExactly("0.0.0.0/0");
        assertThat(e.allowInternetAccess()).isTrue();
    }

    @Test
    void should_allow_ipv4_addresses_written_for_every_port_and_keep_their_denials_apart() {
        E2bEgress e = E2bEgress.of(EgressPolicy.builder().allow("1.1.1.1:*").allow("93.184.215.0/24:*")
                .deny("8.8.4.0/24").deny("tcp://9.9.9.9:53").build());

        assertThat(e.allowOut()).containsExactly("1.1.1.1", "93.184.215.0/24");
        assertThat(e.denyOut()).containsExactly("8.8.4.0/24", "9.9.9.9", "0.0.0.0/0");
        assertThat(e.allowInternetAccess()).isTrue();
    }

    @Test
    void should_map_a_policy_allowing_nothing_to_no_internet_at_all() {
        for (EgressPolicy p : List.of(EgressPolicy.denyAll(), EgressPolicy.builder().deny("45.33.32.0/24").build())) {
            E2bEgress e = E2bEgress.of(p);

            assertThat(e.allowInternetAccess()).as(p.toString()).isFalse();
            assertThat(e.allowOut()).as(p.toString()).isEmpty();
            assertThat(e.denyOut()).as(p.toString()).endsWith("0.0.0.0/0");
        }
        assertThat(E2bEgress.of(EgressPolicy.denyAll()).denyOut()).containsExactly("0.0.0.0/0");
    }

    @Test
    void should_deny_the_listed_ranges_and_the_non_public_ones_for_a_deny_list_policy() {
        E2bEgress e = E2bEgress.of(EgressPolicy.builder().allowOthers().deny("45.33.32.0/24")
                .deny("http://1.2.3.4").allow("pypi.org:8443").allow("10.1.0.0/16:*").build());

        assertThat(e.allowOut()).as("the name adds nothing to 'allow others'; the private range is allowed")
                .containsExactly("10.1.0.0/16");
        assertThat(e.denyOut()).startsWith("45.33.32.0/24", "1.2.3.4").endsWith(NON_PUBLIC_V4.toArray(String[]::new))
                .hasSize(2 + NON_PUBLIC_V4.size()).doesNotContain("0.0.0.0/0");
        assertThat(e.allowInternetAccess()).isTrue();
        assertThat(E2bEgress.of(EgressPolicy.allowAll()).denyOut()).containsExactlyElementsOf(NON_PUBLIC_V4);
    }

    @Test
    void should_take_every_ipv4_range_of_the_non_public_list_but_the_unspecified_one() {
        assertThat(IpRange.NON_PUBLIC.stream().filter(IpRange::isIpv4).map(IpRange::toString).toList())
                .containsExactlyElementsOf(concat(List.of("0.0.0.0/8"), NON_PUBLIC_V4));
    }

    private static List<String> concat(List<String> a, List<String> b) {
        return java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
    }

    @Test
    void should_tell_overlapping_ipv4_ranges_apart() {
        assertThat(E2bEgress.overlap(IpRange.parse("10.0.0.0/8"), IpRange.parse("10.1.0.0/16"))).isTrue();
        assertThat(E2bEgress.overlap(IpRange.parse("10.1.0.0/16"), IpRange.parse("10.0.0.0/8"))).isTrue();
        assertThat(E2bEgress.overlap(IpRange.parse("10.0.0.0/8"), IpRange.parse("11.0.0.0/8"))).isFalse();
        assertThat(E2bEgress.overlap(IpRange.parse("93.184.215.14"), IpRange.parse("93.184.215.0/24"))).isTrue();
        assertThat(E2bEgress.overlap(IpRange.parse("93.184.215.14"), IpRange.parse("93.184.215.15"))).isFalse();
        assertThat(E2bEgress.overlap(IpRange.parse("0.0.0.0/0"), IpRange.parse("255.255.255.255"))).isTrue();
        assertThat(E2bEgress.overlap(IpRange.parse("128.0.0.0/1"), IpRange.parse("127.255.255.255"))).isFalse();
    }

    // ------------------------------------------------------------------ what is refused

    @Test
    void should_refuse_a_deny_rule_on_a_name() {
        refused(EgressPolicy.builder().allow("*.example.com").deny("evil.example.com").build(),
                "deny evil.example.com", "E2B's denyOut takes IP addresses and CIDR ranges only, so a name cannot "
                        + "be denied");
        refused(EgressPolicy.builder().allowOthers().deny("*.evil.example").build(), "deny *.evil.example",
                "a name cannot be denied");
    }

    @Test
    void should_refuse_a_name_rule_restricted_to_ports_or_a_scheme() {
        for (String rule : List.of("https://pypi.org", "http://pypi.org", "pypi.org:443", "pypi.org:8443",
                "pypi.org:80-443", "pypi.org:*", "*.pythonhosted.org:443")) {
            refused(EgressPolicy.allowing("github.com", rule), "allow " + rule,
                    "E2B matches names only for HTTP on port 80 and TLS on port 443, both at once");
        }
        refused(EgressPolicy.allowing("pypi.org:8443"), "allow pypi.org:8443", "write the name without scheme and "
                + "ports ('pypi.org')");
    }

    @Test
    void should_refuse_an_address_rule_not_written_for_every_port() {
        for (String rule : List.of("1.2.3.4", "1.2.3.0/24:443", "https://1.2.3.4:*", "http://1.2.3.4")) {
            refused(EgressPolicy.allowing(rule), "allow " + rule, "E2B allows an address on every port and "
                    + "protocol, UDP included");
        }
        refused(EgressPolicy.allowing("1.2.3.0/24"), "allow 1.2.3.0/24", "('1.2.3.0/24:*')");
    }

    @Test
    void should_refuse_ipv6_rules() {
        refused(EgressPolicy.allowing("[2606:4700::1111]:*"), "allow [2606:4700::1111]:*",
                "E2B's egress firewall filters IPv4 only");
        refused(EgressPolicy.builder().allowOthers().deny("[2001:db8::/32]").build(), "deny [2001:db8::/32]",
                "IPv4 only");
    }

    @Test
    void should_refuse_ranges_e2b_takes_for_the_unspecified_address() {
        refused(EgressPolicy.allowing("0.0.0.0/8:*"), "allow 0.0.0.0/8:*", "E2B's API refuses ranges starting at "
                + "the unspecified address 0.0.0.0");
        assertThat(E2bEgress.of(EgressPolicy.allowing("0.0.0.0/0:*")).allowOut()).containsExactly("0.0.0.0/0");
    }

    @Test
    void should_refuse_a_deny_rule_an_allowed_range_would_override() {
        refused(EgressPolicy.builder().allow("93.184.0.0/16:*").deny("93.184.215.14").build(),
                "deny 93.184.215.14", "it overlaps the rule 'allow 93.184.0.0/16:*', and in E2B an allowed address "
                        + "wins over a denied one");
        refused(EgressPolicy.builder().allowOthers().allow("93.184.215.14:*").deny("93.0.0.0/8").build(),
                "deny 93.0.0.0/8", "it overlaps the rule 'allow 93.184.215.14:*'");
    }

    @Test
    void should_refuse_a_deny_rule_beside_allowed_names() {
        refused(EgressPolicy.builder().allow("pypi.org").deny("151.101.0.0/16").build(), "deny 151.101.0.0/16",
                "an allowed name resolving into 151.101.0.0/16 would still be reached");
    }

    @Test
    void should_refuse_a_narrowed_policy() {
        EgressPolicy narrowed = EgressPolicy.allowing("pypi.org").narrowedBy(EgressPolicy.allowing("pypi.org"));

        assertThatThrownBy(() -> E2bEgress.of(narrowed)).isInstanceOf(UnsupportedCapabilityException.class)
                .hasMessageContaining("is narrowed by another (EgressPolicy.narrowedBy)")
                .hasMessageContaining("allow pypi.org");
        assertThat(E2bEgress.of(EgressPolicy.allowing("pypi.org")).allowOut()).containsExactly("pypi.org");
    }
}
