package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class HostUnchangedCheckTest {

    private static final HostUnchangedCheck.Snapshot BEFORE = new HostUnchangedCheck.Snapshot(
            Set.of("lo", "eth0", "docker0"), Map.of("n1", "bridge"), Map.of("c1", "/web"));

    @Test
    void should_report_the_host_bridge_when_it_vanished() {
        HostUnchangedCheck.Snapshot after = new HostUnchangedCheck.Snapshot(Set.of("lo", "eth0"),
                Map.of("n1", "bridge"), Map.of("c1", "/web"));

        assertThat(HostUnchangedCheck.changes(BEFORE, after, Set.of())).contains("network interfaces gone: [docker0]");
    }

    @Test
    void should_report_vanished_containers_networks_and_leftovers() {
        HostUnchangedCheck.Snapshot after = new HostUnchangedCheck.Snapshot(BEFORE.interfaces(), Map.of(), Map.of());

        assertThat(HostUnchangedCheck.changes(BEFORE, after, Set.of("0123456789ab")))
                .contains("Docker networks gone: [bridge]").contains("Docker containers gone: [/web]")
                .contains("left: [0123456789ab]");
    }

    @Test
    void should_accept_what_others_added_when_nothing_vanished() {
        HostUnchangedCheck.Snapshot after = new HostUnchangedCheck.Snapshot(Set.of("lo", "eth0", "docker0", "veth1"),
                Map.of("n1", "bridge", "n2", "other"), Map.of("c1", "/web", "c2", "/other"));

        assertThat(HostUnchangedCheck.changes(BEFORE, after, Set.of())).isEmpty();
    }
}
