package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Gives the user sandboxed programs run as a name inside the sandbox. A root JVM runs programs as an unprivileged
 * user id that no host account uses ({@link SandboxUser#DEFAULT_UID}), so the host's {@code /etc/passwd}, which the
 * sandbox shows, has no entry for it: {@code whoami}, {@code id -un}, Python's {@code pwd.getpwuid(os.getuid())} and
 * {@code getpass.getuser()}, ssh and git's default identity fail.
 *
 * <p>Where the sandbox shows {@code /etc/passwd} (or {@code /etc/group}) and it has no entry for the program's user
 * (group), the run gets a copy of the host file with one line added, bound read-only over it: the account
 * {@value #NAME} (or {@code sandbox-<uid>} when the host has a {@value #NAME}) whose home is the workspace's
 * {@code home/}. The copy holds exactly what the host file shows plus that line: nothing the sandbox hid before
 * (password hashes live in {@code /etc/shadow}, which stays hidden), and a profile that hides {@code /etc/passwd} keeps
 * it hidden (nothing is added). The copies live in the engine's private state ({@link AccountFiles}): written once per
 * workspace and text, and reused while the host file reads the same.
 */
final class SandboxAccounts {

    /** The name of the sandbox user's account, unless the host already has an account of that name. */
    static final String NAME = "sandbox";

    static final String PASSWD = "/etc/passwd";
    static final String GROUP = "/etc/group";

    private SandboxAccounts() {
    }

    /**
     * The name programs of {@code uid} have inside the sandbox: the host account's, or the one this class adds.
     * Null when the host's password file cannot be read and no name can be given.
     */
    static String nameOf(int uid, String passwd) {
        String host = field(passwd, 2, Integer.toString(uid), 0);
        if (host != null) {
            return host;
        }
        return field(passwd, 0, NAME, 0) == null ? NAME : NAME + "-" + uid;
    }

    /** The host's password file, or an empty text when it cannot be read. */
    static String hostPasswd() {
        return read(Path.of(PASSWD));
    }

    /**
     * The mounts that give the program's user its entries, with the files they bind from {@code files}: none when the
     * host's files already have them, or the plan does not show them (or places its own mount there). The host files
     * are read for every run; a file is written only when no earlier one holds the same text.
     *
     * @param plan  the run's layout so far
     * @param uid   the program's user id
     * @param gid   its group id
     * @param home  the workspace's {@code home/} as the program sees it
     * @param files where the files are kept
     * @throws BackendUnavailableException when the files cannot be written
     */
    static List<Mount> mounts(SandboxLayout.Plan plan, int uid, int gid, String home, AccountFiles files) {
        List<Mount> out = new ArrayList<>();
        String passwd = hostPasswd();
        String name = nameOf(uid, passwd);
        if (shows(plan, PASSWD) && field(passwd, 2, Integer.toString(uid), 0) == null) {
            String line = name + ":x:" + uid + ":" + gid + ":codeexec sandbox user:" + home + ":/bin/sh\n";
            out.add(Mount.aliased(PASSWD, Mount.Kind.RO_BIND, files.file(home, "passwd", text(passwd, line))));
        }
        String group = read(Path.of(GROUP));
        if (shows(plan, GROUP) && field(group, 2, Integer.toString(gid), 0) == null) {
            String groupName = field(group, 0, name, 0) == null ? name : NAME + "-" + gid;
            String line = groupName + ":x:" + gid + ":\n";
            out.add(Mount.aliased(GROUP, Mount.Kind.RO_BIND, files.file(home, "group", text(group, line))));
        }
        return out;
    }

    /** True when the plan shows the host's regular file {@code path} as it is (no mount of its own there). */
    private static boolean shows(SandboxLayout.Plan plan, String path) {
        return Files.isRegularFile(Path.of(path), LinkOption.NOFOLLOW_LINKS) && plan.visible(path)
                && plan.mounts().stream().noneMatch(m -> m.path().equals(path));
    }

    /** Field {@code want} of the first line whose field {@code key} equals {@code value}, or null. */
    private static String field(String file, int key, String value, int want) {
        for (String line : file.split("\n")) {
            String[] f = line.split(":", -1);
            if (f.length > Math.max(key, want) && f[key].equals(value)) {
                return f[want];
            }
        }
        return null;
    }

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    private static String text(String host, String line) {
        return host.isEmpty() || host.endsWith("\n") ? host + line : host + "\n" + line;
    }
}
