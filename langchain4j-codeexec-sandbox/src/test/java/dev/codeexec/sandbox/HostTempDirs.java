package dev.codeexec.sandbox;

import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDirFactory;

/**
 * {@code @TempDir(factory = HostTempDirs.class)}: a fresh host directory that the sandbox's programs see as the host
 * (not under {@code /tmp} or {@code /var/tmp}, which every sandbox replaces by private ones) and that the user they run
 * as can reach whatever the checkout's location: every parent is searchable by others ({@code 0755}). Tests of what
 * the sandbox hides or shows of the host put their host files here, never under the checkout, which may lie in a
 * private ({@code 0700}) directory that the sandbox user cannot traverse; there a hidden path is unreachable anyway,
 * and an attack test would pass without proving anything or fail on a refusal that is in fact safe.
 *
 * <p>As root the directory is created under {@code /var/lib/codeexec-it/} (removed again when it is empty). Otherwise
 * programs run as the JVM's own user, who can reach the checkout: it is created under the module's {@code target/}.
 * JUnit deletes it after the test.
 */
public final class HostTempDirs implements TempDirFactory {

    static final Path ROOT_BASE = Path.of("/var/lib/codeexec-it");

    private Path base;

    @Override
    public Path createTempDirectory(AnnotatedElementContext element, ExtensionContext extension) throws IOException {
        base = SandboxTesting.isRoot() ? ROOT_BASE : Path.of("target", "host-dirs").toAbsolutePath();
        Files.createDirectories(base);
        if (SandboxTesting.isRoot()) {
            Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        Path dir = Files.createTempDirectory(base, "host-");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        return dir.toRealPath();
    }

    /** Called after JUnit deleted the directory: removes the shared base once no test uses it any more. */
    @Override
    public void close() throws IOException {
        if (base != null && base.equals(ROOT_BASE)) {
            try {
                Files.deleteIfExists(base);
            } catch (DirectoryNotEmptyException stillInUse) {
                // Another test's directory: that test's close removes the base.
            }
        }
    }
}
