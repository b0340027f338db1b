package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the engine finds bubblewrap: the standard locations first, then the absolute entries of {@code PATH}. */
class BwrapLookupTest {

    @TempDir
    Path tmp;

    private Path file(String dir, boolean executable) throws IOException {
        Path p = Files.createDirectories(tmp.resolve(dir)).resolve("bwrap");
        Files.writeString(p, "#!/bin/sh\n");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(executable ? "rwxr-xr-x" : "rw-r--r--"));
        return p;
    }

    @Test
    void should_find_bwrap_on_path_when_no_standard_location_has_it() throws IOException {
        Path onPath = file("opt/bin", true);
        file("first", false); // not executable: skipped
        List<String> none = List.of(tmp.resolve("usr/bin/bwrap").toString());

        String found = Preflight.locateBwrap(null, none, tmp.resolve("first") + "::relative/bin:" + onPath.getParent());

        assertThat(found).isEqualTo(onPath.toString());
    }

    @Test
    void should_prefer_a_standard_location_over_path() throws IOException {
        Path standard = file("usr/bin", true);
        Path onPath = file("home/bin", true);

        assertThat(Preflight.locateBwrap(null, List.of(standard.toString()), onPath.getParent().toString()))
                .isEqualTo(standard.toString());
    }

    @Test
    void should_skip_relative_path_entries_and_name_where_it_looked_when_bwrap_is_missing() throws IOException {
        Path there = file("relative", true).getParent();
        List<String> none = List.of(tmp.resolve("usr/bin/bwrap").toString());
        // A relative entry would depend on the JVM's working directory: never used, even where it would match.
        String path = Path.of("").toAbsolutePath().relativize(there).toString();
        assertThat(Path.of(path, "bwrap")).isExecutable();
        assertThat(Preflight.locateBwrap(null, none, there.toString())).isEqualTo(there.resolve("bwrap").toString());

        assertThatThrownBy(() -> Preflight.locateBwrap(null, none, path))
                .isInstanceOf(BackendUnavailableException.class)
                .hasMessageContaining("was not found in " + none + " nor on PATH (" + path + ")")
                .hasMessageContaining("bwrapPath");
        assertThatThrownBy(() -> Preflight.locateBwrap(null, none, null))
                .hasMessageContaining("nor on PATH (unset)");
    }
}
