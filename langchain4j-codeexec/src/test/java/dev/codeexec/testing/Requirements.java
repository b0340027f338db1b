package dev.codeexec.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Requirements of backend tests on the host (a program, a daemon, a kernel). A missing requirement skips the test
 * with a printed reason, unless strict mode is on ({@code -Dcodeexec.strict=1}, set by CI through
 * {@code CODEEXEC_STRICT=1}), where it fails: CI never skips a backend test silently.
 */
public final class Requirements {

    private Requirements() {
    }

    /** True when strict mode is on. */
    public static boolean strict() {
        String s = System.getProperty("codeexec.strict", "");
        if (s.isBlank() || s.startsWith("${")) {
            s = System.getenv().getOrDefault("CODEEXEC_STRICT", "");
        }
        return s.equals("1") || s.equalsIgnoreCase("true");
    }

    /** Skips (or fails in strict mode) unless {@code available}. */
    public static void require(boolean available, String what) {
        if (available) {
            return;
        }
        String msg = "requirement missing: " + what + " (run ./scripts/test as root to provision it)";
        if (strict()) {
            Assertions.fail("strict mode: " + msg);
        }
        System.out.println("SKIPPED: " + msg);
        Assumptions.abort(msg);
    }

    /** Requires an executable in one of the standard system directories. */
    public static String requireCommand(String name) {
        String found = findCommand(name);
        require(found != null, "'" + name + "' on the system PATH");
        return found;
    }

    /** The absolute path of an executable in the standard system directories, or null. */
    public static String findCommand(String name) {
        for (String dir : List.of("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin")) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }
}
