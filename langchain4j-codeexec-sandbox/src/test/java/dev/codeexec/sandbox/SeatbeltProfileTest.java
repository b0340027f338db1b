package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class SeatbeltProfileTest {

    private static final String WS = "/private/var/folders/x/sandbox/workspaces/ws-1";
    private static final String EVIL = "/Users/me/evil\") (allow default) (\"";

    private static List<Mount> layout() {
        return List.of(Mount.of("/", Mount.Kind.RO_BIND),
                Mount.of("/Users/me/.ssh", Mount.Kind.HIDE_DIR),
                Mount.of("/private/var/folders/x/sandbox", Mount.Kind.HIDE_DIR),
                Mount.of(WS, Mount.Kind.BIND),
                Mount.of(WS + "/.git", Mount.Kind.PROTECT),
                Mount.of(WS + "/src/.env", Mount.Kind.HIDE_FILE),
                Mount.of("/private/tmp", Mount.Kind.SCRATCH),
                Mount.of(EVIL, Mount.Kind.RO_BIND));
    }

    @Test
    void should_deny_by_default_and_never_splice_paths() {
        SeatbeltProfile.Profile p = SeatbeltProfile.build(layout(), NetworkMode.RESTRICTED);
        assertThat(p.text()).startsWith("(version 1)\n(deny default)\n");
        assertThat(p.text()).doesNotContain("/Users/me").doesNotContain(WS).doesNotContain("(allow default)");
        assertThat(p.parameters()).containsValues("/", WS, WS + "/.git", "/Users/me/.ssh", EVIL);
    }

    @Test
    void should_carve_hidden_and_protected_paths_out_of_grants() {
        SeatbeltProfile.Profile p = SeatbeltProfile.build(layout(), NetworkMode.RESTRICTED);
        String root = param(p, "/");
        String ssh = param(p, "/Users/me/.ssh");
        String ws = param(p, WS);
        String git = param(p, WS + "/.git");
        String env = param(p, WS + "/src/.env");
        String tmp = param(p, "/private/tmp");
        String rootRead = line(p, "(allow file-read* file-map-executable file-test-existence (require-all (subpath "
                + "(param \"" + root + "\"))");
        assertThat(rootRead).contains("(require-not (subpath (param \"" + ssh + "\")))")
                .contains("(require-not (subpath (param \"" + param(p, "/private/var/folders/x/sandbox") + "\")))");
        String wsWrite = line(p, "(allow file-write* (require-all (subpath (param \"" + ws + "\"))");
        assertThat(wsWrite).contains("(require-not (literal (param \"" + git + "\")))")
                .contains("(require-not (subpath (param \"" + git + "\")))")
                .contains("(require-not (subpath (param \"" + env + "\")))");
        // The workspace is readable again although its parent is hidden; its .env is not.
        assertThat(line(p, "(allow file-read* file-map-executable file-test-existence (require-all (subpath (param \""
                + ws + "\"))")).contains("(require-not (subpath (param \"" + env + "\")))");
        // A scratch directory has no private tmpfs on macOS, so the host's is not exposed either.
        assertThat(p.text()).contains("(require-not (subpath (param \"" + tmp + "\")))");
        assertThat(p.text()).doesNotContain("(allow file-write* (subpath (param \"" + tmp + "\"))");
    }

    @Test
    void should_allow_network_only_when_enabled() {
        String restricted = SeatbeltProfile.build(layout(), NetworkMode.RESTRICTED).text();
        String enabled = SeatbeltProfile.build(layout(), NetworkMode.ENABLED).text();
        assertThat(restricted).doesNotContain("network-outbound").doesNotContain("system-socket");
        assertThat(enabled).contains("(allow network-outbound)").contains("(allow network-inbound)")
                .contains("com.apple.trustd.agent");
    }

    @Test
    void should_invoke_sandbox_exec_by_absolute_path_with_parameters() {
        SeatbeltProfile.Profile p = SeatbeltProfile.build(layout(), NetworkMode.RESTRICTED);
        List<String> argv = SeatbeltProfile.argv(p, List.of("python3", "-c", "print(1)"));
        assertThat(argv.subList(0, 3)).containsExactly("/usr/bin/sandbox-exec", "-p", p.text());
        assertThat(argv).contains("-D" + param(p, WS) + "=" + WS, "-D" + param(p, EVIL) + "=" + EVIL);
        assertThat(argv.subList(argv.indexOf("--"), argv.size())).containsExactly("--", "python3", "-c", "print(1)");
    }

    @Test
    void should_allow_metadata_of_ancestors_of_grants() {
        SeatbeltProfile.Profile p = SeatbeltProfile.build(List.of(Mount.of("/Users/me/ws", Mount.Kind.BIND)),
                NetworkMode.RESTRICTED);
        assertThat(p.parameters()).containsValues("/Users", "/Users/me");
        assertThat(p.text()).contains("(allow file-read-metadata (literal (param \"A0\")) (literal (param \"A1\")))");
    }

    private static String line(SeatbeltProfile.Profile p, String prefix) {
        return p.text().lines().filter(l -> l.startsWith(prefix)).findFirst().orElseThrow(
                () -> new AssertionError("no line starting with " + prefix + " in\n" + p.text()));
    }

    private static String param(SeatbeltProfile.Profile p, String path) {
        return p.parameters().entrySet().stream().filter(e -> e.getValue().equals(path)).findFirst().orElseThrow()
                .getKey();
    }
}
