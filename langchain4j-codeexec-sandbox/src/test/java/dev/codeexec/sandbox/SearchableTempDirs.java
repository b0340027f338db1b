package dev.codeexec.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDirFactory;

/**
 * {@code @TempDir} directories that others can search but not list ({@code 0711}), as a sandbox root's parents must
 * be when programs run as the unprivileged sandbox user (a root JVM): bubblewrap, running as that user, resolves
 * every path it mounts. JUnit's own are {@code 0700}.
 */
public final class SearchableTempDirs implements TempDirFactory {

    @Override
    public Path createTempDirectory(AnnotatedElementContext element, ExtensionContext extension) throws IOException {
        Path dir = Files.createTempDirectory("junit-");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
        return dir;
    }
}
