package dev.codeexec.e2b;

import dev.codeexec.testing.Requirements;
import java.util.concurrent.TimeUnit;

/**
 * What the tests against {@link FakeE2b} need on this host: its programs are the engine's real argv (PID namespaces as
 * root, {@code setpriv}, {@code prlimit}, {@code env}), so root and util-linux; the code interpreter's cells need
 * {@code /usr/bin/python3}. Missing, they are skipped with a reason (and fail in strict mode).
 */
public final class FakeTesting {

    private static Boolean namespaces;

    private FakeTesting() {
    }

    public static synchronized void requireHost() {
        for (String c : new String[] {"unshare", "setpriv", "prlimit", "env", "sh"}) {
            Requirements.requireCommand(c);
        }
        if (namespaces == null) {
            try {
                Process p = new ProcessBuilder("unshare", "--pid", "--fork", "--kill-child", "--", "setpriv",
                        "--reuid=0", "--regid=0", "--init-groups", "--", "true").start();
                namespaces = p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
            } catch (Exception e) {
                namespaces = false;
            }
        }
        Requirements.require(namespaces, "root with PID namespaces (unshare --pid) for the fake E2B sandboxes");
    }

    public static void requirePython() {
        requireHost();
        Requirements.require(new java.io.File("/usr/bin/python3").canExecute(),
                "/usr/bin/python3 for the fake code interpreter");
    }
}
