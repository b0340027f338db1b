package dev.codeexec.sandbox;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Generates a macOS Seatbelt (SBPL) profile and the {@code /usr/bin/sandbox-exec} invocation for a planned layout.
 * Pure: it turns the same {@link Mount} list the Linux backend uses into rules.
 *
 * <p>The profile denies by default. Every path reaches it as a {@code -D} parameter and is referenced with
 * {@code (param "P<n>")}: no path is ever spliced into profile text, so no path can change the profile's meaning.
 * Reads are allowed under read and write roots minus every hidden path below them; writes under write roots minus
 * every read-only, protected and hidden path below them. Deeper grants are separate allow rules, so the most specific
 * rule wins without relying on rule order. With a restricted network no network operation is allowed at all
 * (including UNIX-domain sockets); with an enabled network outbound and inbound sockets and the name-resolution and
 * trust services are allowed.
 */
final class SeatbeltProfile {

    /** Always {@code /usr/bin/sandbox-exec}, never a {@code PATH} lookup. */
    static final String SANDBOX_EXEC = "/usr/bin/sandbox-exec";

    /** System locations every program needs to start (dyld, frameworks, locale, time zone). */
    static final List<String> PLATFORM_READ_ROOTS = List.of("/usr/lib", "/usr/libexec", "/usr/share",
            "/System/Library", "/Library/Apple", "/Library/Preferences", "/private/etc", "/private/var/db/timezone",
            "/bin", "/sbin", "/usr/bin", "/usr/sbin", "/opt/homebrew", "/usr/local");

    /**
     * A generated profile.
     *
     * @param text       the SBPL text; contains no host path
     * @param parameters {@code -D} parameters, in order
     */
    record Profile(String text, Map<String, String> parameters) {
    }

    private SeatbeltProfile() {
    }

    /**
     * Builds the profile.
     *
     * @param mounts  the run's layout (see {@link SandboxLayout}); RO_BIND and PROTECT are read-only, BIND
     *                writable, HIDE_* and SCRATCH hidden
     * @param network the network mode
     */
    static Profile build(List<Mount> mounts, NetworkMode network) {
        Map<String, String> params = new LinkedHashMap<>();
        Map<String, String> names = new LinkedHashMap<>();
        for (Mount m : BwrapCommand.sort(mounts)) {
            String name = "P" + names.size();
            names.put(m.path(), name);
            params.put(name, m.path());
        }
        StringBuilder p = new StringBuilder();
        p.append("(version 1)\n");
        p.append("(deny default)\n");
        p.append("(allow process-exec process-fork)\n");
        p.append("(allow signal (target same-sandbox))\n");
        p.append("(allow process-info* (target same-sandbox))\n");
        p.append("(allow sysctl-read)\n");
        p.append("(allow ipc-posix-sem)\n");
        p.append("(allow pseudo-tty)\n");
        p.append("(allow mach-lookup (global-name \"com.apple.system.opendirectoryd.libinfo\")"
                + " (global-name \"com.apple.system.logger\") (global-name \"com.apple.PowerManagement.control\"))\n");
        p.append("(allow file-read* file-write* file-ioctl (literal \"/dev/null\") (literal \"/dev/zero\")"
                + " (literal \"/dev/tty\") (literal \"/dev/ptmx\") (regex #\"^/dev/fd/[0-9]+$\")"
                + " (regex #\"^/dev/ttys[0-9]+$\"))\n");
        p.append("(allow file-read* (literal \"/dev/random\") (literal \"/dev/urandom\"))\n");
        p.append("(allow file-read-metadata (literal \"/\") (literal \"/private\") (literal \"/var\")"
                + " (literal \"/tmp\") (literal \"/etc\"))\n");
        p.append("(allow file-read* file-map-executable");
        for (String root : PLATFORM_READ_ROOTS) {
            p.append(" (subpath \"").append(root).append("\")");
        }
        p.append(")\n");

        List<Mount> sorted = BwrapCommand.sort(mounts);
        for (Mount m : sorted) {
            if (isHidden(m) || m.kind() == Mount.Kind.KEEP || m.kind() == Mount.Kind.REMOUNT_RO) {
                continue; // a directory held in place is covered by its writable root's rules
            }
            // Reads: this root minus every hidden path below it.
            p.append("(allow file-read* file-map-executable file-test-existence ");
            appendScoped(p, m, sorted, names, SeatbeltProfile::isHidden);
            p.append(")\n");
            if (isWritable(m)) {
                // Writes: this root minus everything below it that is not itself writable, and minus the
                // directories held in place (their contents stay writable, they themselves cannot be moved).
                p.append("(allow file-write* ");
                appendScoped(p, m, sorted, names, o -> !isWritable(o) || o.kind() == Mount.Kind.KEEP);
                p.append(")\n");
            }
        }
        // Resolving a granted path needs the metadata of its ancestors (not their contents).
        List<String> ancestors = new ArrayList<>();
        for (Mount m : sorted) {
            if (isHidden(m)) {
                continue;
            }
            String a = m.path();
            while (a.lastIndexOf('/') > 0) {
                a = a.substring(0, a.lastIndexOf('/'));
                if (!ancestors.contains(a) && !names.containsKey(a)) {
                    ancestors.add(a);
                }
            }
        }
        if (!ancestors.isEmpty()) {
            p.append("(allow file-read-metadata");
            for (int i = 0; i < ancestors.size(); i++) {
                params.put("A" + i, ancestors.get(i));
                p.append(" (literal (param \"A").append(i).append("\"))");
            }
            p.append(")\n");
        }
        if (network == NetworkMode.ENABLED) {
            p.append("(allow network-outbound)\n");
            p.append("(allow network-inbound)\n");
            p.append("(allow system-socket)\n");
            p.append("(allow mach-lookup (global-name \"com.apple.SecurityServer\")"
                    + " (global-name \"com.apple.trustd.agent\") (global-name \"com.apple.dnssd.service\")"
                    + " (global-name \"com.apple.system.DirectoryService.libinfo_v1\")"
                    + " (global-name \"com.apple.networkd\") (global-name \"com.apple.ocspd\"))\n");
        }
        return new Profile(p.toString(), params);
    }

    /** {@code (require-all (subpath P) (require-not (subpath Q))...)} or plain {@code (subpath P)}. */
    private static void appendScoped(StringBuilder p, Mount root, List<Mount> all, Map<String, String> names,
                                     java.util.function.Predicate<Mount> excluded) {
        List<Mount> carve = new ArrayList<>();
        for (Mount o : all) {
            if (root.isStrictAncestorOf(o) && excluded.test(o)) {
                carve.add(o);
            }
        }
        String self = "(subpath (param \"" + names.get(root.path()) + "\"))";
        if (carve.isEmpty()) {
            p.append(self);
            return;
        }
        p.append("(require-all ").append(self);
        for (Mount o : carve) {
            String n = names.get(o.path());
            p.append(" (require-not (literal (param \"").append(n).append("\")))");
            if (o.kind() != Mount.Kind.KEEP) {
                p.append(" (require-not (subpath (param \"").append(n).append("\")))");
            }
        }
        p.append(')');
    }

    /** Hidden paths; a scratch directory too, since macOS has no private tmpfs to put there. */
    private static boolean isHidden(Mount m) {
        return m.kind() == Mount.Kind.HIDE_DIR || m.kind() == Mount.Kind.HIDE_FILE
                || m.kind() == Mount.Kind.SCRATCH;
    }

    private static boolean isWritable(Mount m) {
        return m.kind() == Mount.Kind.BIND || m.kind() == Mount.Kind.KEEP;
    }

    /** {@code /usr/bin/sandbox-exec -p <profile> -DP0=/... -- cmd args}. */
    static List<String> argv(Profile profile, List<String> command) {
        List<String> a = new ArrayList<>();
        a.add(SANDBOX_EXEC);
        a.add("-p");
        a.add(profile.text());
        profile.parameters().forEach((k, v) -> a.add("-D" + k + "=" + v));
        a.add("--");
        a.addAll(command);
        return a;
    }
}
