package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the host rules resolved to is reused only while the host directories the resolution looked in are unchanged:
 * each attack changes exactly what the cache depends on between two plans, and the second plan must see the change.
 * The cache's clock runs ahead, so that every result is kept (the settling rule has a test of its own). The test
 * directories lie below the shared temporary directory, which other processes change at any time (each change there
 * rightly drops the cached result): a positive control asks that at least one of several plans reuses it.
 */
class HostRuleCacheTest {

    @TempDir
    Path tmp;

    /** The sandbox root, its one workspace, a home directory and a host directory, all below the test's own. */
    private Path root;
    private Path ws;
    private Path home;
    private Path host;

    @BeforeEach
    void createHostAndSandboxRoot() throws IOException {
        for (String d : List.of("sandbox/workspaces/ws-1", "home/alice", "host")) {
            Files.createDirectories(tmp.resolve(d));
        }
        root = tmp.resolve("sandbox").toRealPath();
        ws = root.resolve("workspaces/ws-1");
        home = tmp.resolve("home/alice").toRealPath();
        host = tmp.resolve("host").toRealPath();
        Files.writeString(host.resolve("public.txt"), "public");
    }

    /** A cache whose clock is a minute ahead: every directory looks settled. */
    private static HostRuleCache ahead() {
        return new HostRuleCache(() -> TimeUnit.MILLISECONDS.toNanos(System.currentTimeMillis() + 60_000));
    }

    /**
     * Plans until a plan reuses the cached result (at most 50 times): true when one did. The attack assertions never
     * depend on it; it shows that the cache is used at all.
     */
    private boolean reused(PermissionProfile p, HostRuleCache cache, Map<String, Mount.Kind> expected) {
        for (int i = 0; i < 50; i++) {
            long before = cache.hits();
            assertThat(plan(p, cache)).isEqualTo(expected);
            if (cache.hits() > before) {
                return true;
            }
        }
        return false;
    }

    private Map<String, Mount.Kind> plan(PermissionProfile p, HostRuleCache cache) {
        return SandboxLayout.plan(p, ws, root, List.of(home), root.resolve("state/runs/r1"), null, null,
                new ProtectedNameScanner(), cache).mounts().stream()
                .collect(Collectors.toMap(Mount::path, Mount::kind));
    }

    @Test
    void should_hide_a_host_secret_created_between_two_runs_after_the_rules_were_cached() throws IOException {
        HostRuleCache cache = ahead();
        PermissionProfile p = PermissionProfile.workspaceWrite().withNoAccessPaths(host.resolve("secret").toString(),
                "~/.aws");
        Map<String, Mount.Kind> first = plan(p, cache);
        assertThat(first).doesNotContainKey(host.resolve("secret").toString());
        // Positive control: nothing changed, the cached result is reused and plans the same layout.
        assertThat(reused(p, cache, first)).isTrue();
        // Attack: the secrets appear on the host between runs.
        Files.writeString(host.resolve("secret"), "s3cret");
        Files.createDirectories(home.resolve(".aws"));
        Map<String, Mount.Kind> next = plan(p, cache);
        assertThat(next).containsEntry(host.resolve("secret").toString(), Mount.Kind.HIDE_FILE)
                .containsEntry(home.resolve(".aws").toString(), Mount.Kind.HIDE_DIR);
    }

    @Test
    void should_hide_the_new_target_when_a_hidden_directory_is_swapped_for_a_link_between_runs() throws IOException {
        HostRuleCache cache = ahead();
        Path keys = Files.createDirectories(host.resolve("keys"));
        Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere/keys2")).toRealPath();
        PermissionProfile p = PermissionProfile.workspaceWrite().withNoAccessPaths(keys.toString());
        Map<String, Mount.Kind> first = plan(p, cache);
        assertThat(first).containsEntry(keys.toString(), Mount.Kind.HIDE_DIR);
        assertThat(reused(p, cache, first)).isTrue();
        // Attack: the hidden directory is moved away and a link to another directory takes its name.
        Files.move(keys, host.resolve("keys-old"));
        Files.createSymbolicLink(keys, elsewhere);
        Map<String, Mount.Kind> next = plan(p, cache);
        assertThat(next).containsEntry(elsewhere.toString(), Mount.Kind.HIDE_DIR).doesNotContainKey(keys.toString());
    }

    @Test
    void should_refuse_a_read_grant_that_vanished_between_runs_after_it_was_cached() throws IOException {
        HostRuleCache cache = ahead();
        Path data = Files.createDirectories(tmp.resolve("data/set"));
        PermissionProfile p = PermissionProfile.workspaceWrite().withReadPaths(data.toString());
        Map<String, Mount.Kind> first = plan(p, cache);
        assertThat(first).containsEntry(data.toRealPath().toString(), Mount.Kind.RO_BIND);
        assertThat(reused(p, cache, first)).isTrue();
        Files.delete(data);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> plan(p, cache))
                .isInstanceOf(dev.codeexec.engine.PolicyViolationException.class)
                .hasMessageContaining("no longer exists");
    }

    @Test
    void should_not_keep_a_result_resolved_in_a_directory_changed_within_a_clock_step() throws IOException {
        // A clock a millisecond after the last change of the directory the rule is resolved in: that change may share
        // a clock step with a later one, so nothing is kept.
        long changed = ((java.nio.file.attribute.FileTime) Files.getAttribute(host, "unix:ctime"))
                .to(TimeUnit.NANOSECONDS);
        HostRuleCache cache = new HostRuleCache(() -> changed + TimeUnit.MILLISECONDS.toNanos(1));
        PermissionProfile p = PermissionProfile.workspaceWrite().withNoAccessPaths(host.resolve("secret").toString());
        plan(p, cache);
        plan(p, cache);
        assertThat(cache.hits()).isZero();
        // Positive control: with every directory settled the result is kept.
        HostRuleCache settled = ahead();
        assertThat(reused(p, settled, plan(p, settled))).isTrue();
    }

    @Test
    void should_resolve_afresh_every_run_with_a_host_write_grant_or_another_set_of_homes() throws IOException {
        HostRuleCache cache = ahead();
        Path grant = Files.createDirectories(tmp.resolve("grant"));
        PermissionProfile writes = PermissionProfile.workspaceWrite().withWritePaths(grant.toString())
                .withNoAccessPaths(grant.resolve("secret").toString());
        plan(writes, cache);
        Files.writeString(grant.resolve("secret"), "s3cret");
        assertThat(plan(writes, cache)).containsEntry(grant.toRealPath().resolve("secret").toString(),
                Mount.Kind.HIDE_FILE);
        assertThat(cache.hits()).isZero();
        // Another list of homes is another key: a new home's secrets are hidden from its first run on.
        PermissionProfile p = PermissionProfile.workspaceWrite();
        plan(p, cache);
        Path bob = Files.createDirectories(tmp.resolve("home/bob/.ssh")).getParent().toRealPath();
        Map<String, Mount.Kind> withBob = SandboxLayout.plan(p, ws, root, List.of(home, bob),
                root.resolve("state/runs/r1"), null, null, new ProtectedNameScanner(), cache).mounts().stream()
                .collect(Collectors.toMap(Mount::path, Mount::kind));
        assertThat(withBob).containsEntry(bob.resolve(".ssh").toString(), Mount.Kind.HIDE_DIR);
    }
}
