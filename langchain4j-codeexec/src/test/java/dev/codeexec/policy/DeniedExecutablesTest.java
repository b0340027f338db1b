package dev.codeexec.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link CommandPolicy#deniedExecutables(String)}: the real files behind the deny list's names on a PATH, for a
 * backend that hides them. Each case is built in a temporary directory that plays the host's bin directories.
 */
class DeniedExecutablesTest {

    @TempDir
    Path tmp;

    private Path bin;
    private Path sbin;

    @BeforeEach
    void dirs() throws IOException {
        // real paths: a temporary directory may itself be reached through a link (macOS /var -> /private/var)
        tmp = tmp.toRealPath();
        bin = Files.createDirectories(tmp.resolve("usr/bin"));
        sbin = Files.createDirectories(tmp.resolve("usr/sbin"));
    }

    private static Path file(Path dir, String name, String mode) throws IOException {
        Path f = dir.resolve(name);
        Files.writeString(f, "#!/bin/sh\nexit 0\n");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(mode));
        return f;
    }

    private static Path executable(Path dir, String name) throws IOException {
        return file(dir, name, "rwxr-xr-x");
    }

    private String path(Path... dirs) {
        StringBuilder sb = new StringBuilder();
        for (Path d : dirs) {
            sb.append(sb.length() == 0 ? "" : ":").append(d);
        }
        return sb.toString();
    }

    @Test
    void should_find_the_denied_names_on_every_path_entry() throws IOException {
        Path curl = executable(bin, "curl");
        Path wget = executable(sbin, "wget");
        executable(bin, "ls");
        executable(bin, "env"); // built-in deny: refused on the command line, never hidden

        Set<Path> hidden = CommandPolicy.builder().deny("curl", "wget").build().deniedExecutables(path(bin, sbin));

        assertThat(hidden).containsExactly(curl, wget);
    }

    @Test
    void should_match_names_loosely_as_the_deny_list_does() throws IOException {
        Path python3 = executable(bin, "python3");
        Path python312 = executable(bin, "python3.12");
        Path threaded = executable(bin, "python3.13t");
        Path upper = executable(bin, "CURL");
        executable(bin, "pythonista"); // not a version of python
        executable(bin, "curly");

        String elsewhere = tmp.resolve("elsewhere/curl").toString(); // a path entry matches by basename too
        Set<Path> hidden = CommandPolicy.builder().deny("python", elsewhere).build()
                .deniedExecutables(bin.toString());

        assertThat(hidden).containsExactlyInAnyOrder(python3, python312, threaded, upper);
    }

    @Test
    void should_give_the_real_file_when_a_name_is_a_link() throws IOException {
        // Debian's alternatives: /usr/bin/nc -> /etc/alternatives/nc -> /usr/bin/nc.openbsd
        Path real = executable(bin, "nc.openbsd");
        Path alternatives = Files.createDirectories(tmp.resolve("etc/alternatives"));
        Files.createSymbolicLink(alternatives.resolve("nc"), real);
        Files.createSymbolicLink(bin.resolve("nc"), alternatives.resolve("nc"));

        Set<Path> hidden = CommandPolicy.builder().deny("nc").build().deniedExecutables(bin.toString());

        assertThat(hidden).containsExactly(real);
        assertThat(Files.isSymbolicLink(bin.resolve("nc"))).isTrue();
    }

    @Test
    void should_report_each_file_once_when_a_path_entry_is_a_link_to_another() throws IOException {
        // merged /usr: /bin -> usr/bin
        Path curl = executable(bin, "curl");
        Path binLink = Files.createSymbolicLink(tmp.resolve("bin"), bin);

        Set<Path> hidden = CommandPolicy.builder().deny("curl").build().deniedExecutables(path(binLink, bin));

        assertThat(hidden).containsExactly(curl);
    }

    @Test
    void should_include_files_without_the_execute_bit_because_the_loader_runs_them() throws IOException {
        // /lib64/ld-linux-x86-64.so.2 /usr/bin/curl runs a file it can read, executable or not
        Path readable = file(bin, "curl", "rw-r--r--");

        Set<Path> hidden = CommandPolicy.builder().deny("curl").build().deniedExecutables(bin.toString());

        assertThat(hidden).containsExactly(readable);
    }

    @Test
    void should_include_hard_links_of_a_denied_file_under_any_name() throws IOException {
        Path curl = executable(bin, "curl");
        Path alias = Files.createLink(sbin.resolve("fetch-tool"), curl);
        executable(sbin, "other");

        Set<Path> hidden = CommandPolicy.builder().deny("curl").build().deniedExecutables(path(bin, sbin));

        assertThat(hidden).containsExactlyInAnyOrder(curl, alias);
    }

    @Test
    void should_include_absolute_deny_entries_outside_the_path() throws IOException {
        Path opt = Files.createDirectories(tmp.resolve("opt/tool/bin"));
        Path tool = executable(opt, "tool");
        Path onPath = executable(bin, "tool");

        Set<Path> hidden = CommandPolicy.builder().deny(tool.toString(), "./work/local-tool").build()
                .deniedExecutables(bin.toString());

        assertThat(hidden).containsExactlyInAnyOrder(tool, onPath);
    }

    @Test
    void should_return_the_multi_call_binary_a_denied_name_links_to() throws IOException {
        // documented: hiding it hides every program it provides
        Path busybox = executable(bin, "busybox");
        Files.createSymbolicLink(bin.resolve("wget"), busybox);
        Files.createSymbolicLink(bin.resolve("ls"), busybox);

        Set<Path> hidden = CommandPolicy.builder().deny("wget").build().deniedExecutables(bin.toString());

        assertThat(hidden).containsExactly(busybox);
    }

    @Test
    void should_skip_relative_entries_directories_dangling_links_and_missing_dirs() throws IOException {
        Files.createDirectories(bin.resolve("curl")); // a directory, not a program
        Files.createSymbolicLink(sbin.resolve("curl"), tmp.resolve("nowhere/curl"));
        Path work = Files.createDirectories(tmp.resolve("work"));
        executable(work, "curl"); // reachable only through the relative entries below
        String path = ".:work::" + bin + ":" + sbin + ":" + tmp.resolve("missing") + ":" + work.resolve("curl");

        Set<Path> hidden = CommandPolicy.builder().deny("curl").build().deniedExecutables(path);

        assertThat(hidden).isEmpty();
        // positive control: the same file is found when its directory is an absolute entry
        assertThat(CommandPolicy.builder().deny("curl").build().deniedExecutables(path + ":" + work))
                .containsExactly(work.resolve("curl"));
    }

    @Test
    void should_be_empty_without_a_deny_list_and_reject_a_blank_path() throws IOException {
        executable(bin, "curl");
        executable(bin, "sh");

        assertThat(CommandPolicy.builder().allow("curl").build().deniedExecutables(bin.toString())).isEmpty();
        assertThat(CommandPolicy.permissive().deniedExecutables(bin.toString())).isEmpty();
        assertThatThrownBy(() -> CommandPolicy.builder().deny("curl").build().deniedExecutables(" "))
                .isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> CommandPolicy.permissive().deniedExecutables(null))
                .isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_return_a_sorted_unmodifiable_set() throws IOException {
        Path b = executable(sbin, "wget");
        Path a = executable(bin, "curl");

        Set<Path> hidden = CommandPolicy.builder().deny("wget", "curl").build().deniedExecutables(path(sbin, bin));

        assertThat(List.copyOf(hidden)).containsExactly(a, b);
        assertThatThrownBy(() -> hidden.add(tmp)).isInstanceOf(UnsupportedOperationException.class);
    }
}
