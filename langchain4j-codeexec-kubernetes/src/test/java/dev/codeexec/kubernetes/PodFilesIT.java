package dev.codeexec.kubernetes;

import static dev.codeexec.kubernetes.PodWorkspaceFilesContractTest.exec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.testing.Requirements;
import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.FileWindow;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.WorkspaceFiles.WalkAction;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PodFiles} against a pod on this host ({@link FakePod}), for what the file contract does not say: names that
 * look like shell or options stay data on every path (write, read, stat, walk, export, import, delete); a window of a
 * large file moves only the window over exec; links leading out of the workspace are never read or written through.
 * Each attack sits next to the positive control showing that the check would see the damage.
 */
class PodFilesIT {

    /** Created in the pod if any name were ever run as a command. */
    private static final String PWNED = PodLayout.VOLUME + "/pwned";
    private static final String OUTSIDE = PodLayout.VOLUME + "/outside";

    private static final List<String> HOSTILE = List.of("a'b", "a\"b", "$(touch " + PWNED + ")",
            "`touch " + PWNED + "`", "line\nbreak", "-rf", "--help", "; touch " + PWNED, "*", " lead",
            "-", "x;y&&z|w");

    private static FakePod pod;
    private final Counting counting = new Counting();
    private PodFiles files;

    @BeforeAll
    static void startPod() {
        Requirements.require(FakePod.available(), "root with bwrap, nsenter and setpriv (the fake pod)");
        pod = FakePod.start("files-it");
    }

    @AfterAll
    static void stopPod() {
        if (pod != null) {
            pod.close();
        }
    }

    @BeforeEach
    void freshWorkspace() {
        exec(pod, "sh", "-c", "chmod -R u+w \"$1\" 2>/dev/null; rm -rf \"$1\" \"$2\" \"$3\"; mkdir -p \"$1\" \"$3\""
                + " && printf secret >\"$3/file\"", "sh", PodLayout.ROOT, PWNED, OUTSIDE);
        files = new PodFiles(pod.name(), counting, PodLayout.DEFAULT_UID, PodLayout.DEFAULT_UID,
                PodFiles.Limits.DEFAULT);
    }

    // ------------------------------------------------------------------ names are data

    @Test
    void should_keep_every_name_data_when_names_look_like_shell_or_options(@TempDir Path host) throws IOException {
        Path src = Files.createDirectories(host.resolve("src"));
        for (String name : HOSTILE) {
            files.write("w/" + name, utf8("content of " + name), 0644);
            Files.writeString(src.resolve(name.replace("/", "_")), name);
        }
        files.importTree(ImportSource.ofHostPath(src.toRealPath()), "imported/" + HOSTILE.get(2), false);

        List<String> walked = new ArrayList<>();
        files.walk("w", e -> {
            if (e.type() == EntryType.FILE) {
                walked.add(e.path());
            }
            return WalkAction.CONTINUE;
        });
        assertThat(walked).hasSize(HOSTILE.size());
        for (String name : HOSTILE) {
            String p = "w/" + name;
            assertThat(walked).contains(p);
            assertThat(files.stat(p)).get().extracting(FileEntry::type).isEqualTo(EntryType.FILE);
            assertThat(new String(files.read(p, 0, 1000).content(), StandardCharsets.UTF_8))
                    .isEqualTo("content of " + name);
            assertThat(files.stat("imported/" + HOSTILE.get(2) + "/" + name.replace("/", "_"))).isPresent();
        }
        List<String> exported = new ArrayList<>();
        files.export(HOSTILE.stream().map(n -> "w/" + n).toList(), (p, size, in) -> {
            exported.add(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            return true;
        });
        assertThat(exported).hasSize(HOSTILE.size()).allMatch(s -> s.startsWith("content of "));
        for (String name : HOSTILE) {
            files.delete("w/" + name);
            assertThat(files.stat("w/" + name)).isEmpty();
        }
        files.delete("imported/" + HOSTILE.get(2));

        assertThat(entries("w")).noneMatch(p -> files.stat(p).get().type() == EntryType.FILE);
        assertThat(files.stat("imported/" + HOSTILE.get(2))).isEmpty();
        assertThat(pwned()).as("a name was run as a command").isFalse();
    }

    @Test
    void should_see_the_marker_when_a_name_is_run_as_a_command() {
        // The positive control: the same marker, made by a command line built from a name, is seen.
        exec(pod, "sh", "-c", "echo " + HOSTILE.get(2));

        assertThat(pwned()).isTrue();
    }

    // ------------------------------------------------------------------ windows move only the window

    @Test
    void should_move_only_the_window_when_reading_a_window_of_a_large_file() {
        String big = PodLayout.ROOT + "/big.bin";
        exec(pod, "sh", "-c", "truncate -s 268435456 \"$1\" && printf 'needle' | dd of=\"$1\" bs=1 seek=200000000"
                + " conv=notrunc 2>/dev/null", "sh", big);
        counting.reset();

        FileWindow w = files.read("big.bin", 200_000_000, 6);

        assertThat(new String(w.content(), StandardCharsets.UTF_8)).isEqualTo("needle");
        assertThat(w.size()).isEqualTo(268_435_456L);
        assertThat(counting.stdoutBytes.get()).as("bytes that crossed exec").isLessThan(4096);
    }

    @Test
    void should_count_every_byte_when_a_whole_file_is_exported() {
        // The positive control: the counter sees what crosses exec.
        exec(pod, "sh", "-c", "head -c 1000000 /dev/zero >\"$1\"", "sh", PodLayout.ROOT + "/mid.bin");
        counting.reset();

        long[] size = {0};
        files.export(List.of("mid.bin"), (p, s, in) -> {
            size[0] = in.transferTo(OutputStream.nullOutputStream());
            return true;
        });

        assertThat(size[0]).isEqualTo(1_000_000);
        assertThat(counting.stdoutBytes.get()).isGreaterThanOrEqualTo(1_000_000);
    }

    // ------------------------------------------------------------------ links leading out

    @Test
    void should_neither_read_nor_write_through_a_link_leading_out_of_the_workspace() {
        exec(pod, "ln", "-s", OUTSIDE + "/file", PodLayout.ROOT + "/out-link");
        exec(pod, "ln", "-s", OUTSIDE, PodLayout.ROOT + "/out-dir");

        assertThatThrownBy(() -> files.read("out-link", 0, 100)).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.export(List.of("out-link"), (p, s, in) -> true))
                .isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.write("out-dir/file", utf8("pwned"), 0644))
                .isInstanceOf(PathEscapeException.class);
        files.write("out-link", utf8("replaced"), 0644);

        assertThat(exec(pod, "cat", OUTSIDE + "/file")).isEqualTo("secret");
        assertThat(files.stat("out-link")).get().extracting(FileEntry::type).isEqualTo(EntryType.FILE);
        assertThat(new String(files.read("out-link", 0, 100).content(), StandardCharsets.UTF_8)).isEqualTo("replaced");
    }

    @Test
    void should_follow_a_link_that_stays_in_the_workspace() {
        // The positive control: a link inside is followed on read and on write.
        files.write("real/a.txt", utf8("alpha"), 0644);
        exec(pod, "ln", "-s", PodLayout.ROOT + "/real", PodLayout.ROOT + "/in-dir");

        assertThat(new String(files.read("in-dir/a.txt", 0, 100).content(), StandardCharsets.UTF_8)).isEqualTo("alpha");
        files.write("in-dir/b.txt", utf8("beta"), 0644);
        assertThat(exec(pod, "cat", PodLayout.ROOT + "/real/b.txt")).isEqualTo("beta");
    }

    // ------------------------------------------------------------------ helpers

    private List<String> entries(String dir) {
        List<String> out = new ArrayList<>();
        files.walk(dir, e -> {
            out.add(e.path());
            return WalkAction.CONTINUE;
        });
        return out;
    }

    private static boolean pwned() {
        return exec(pod, "sh", "-c", "if [ -e \"$1\" ]; then echo yes; fi", "sh", PWNED).equals("yes\n");
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The fake pod's commands, counting the bytes of standard output that cross exec. */
    private static final class Counting implements PodCommands {

        final AtomicLong stdoutBytes = new AtomicLong();

        void reset() {
            stdoutBytes.set(0);
        }

        @Override
        public Result run(String name, List<String> argv, InputStream stdin, OutputStream stdout, Duration timeout) {
            OutputStream counted = stdout == null ? null : new OutputStream() {
                @Override
                public void write(int b) throws IOException {
                    stdoutBytes.incrementAndGet();
                    stdout.write(b);
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    stdoutBytes.addAndGet(len);
                    stdout.write(b, off, len);
                }

                @Override
                public void close() throws IOException {
                    stdout.close();
                }
            };
            return pod.commands().run(name, argv, stdin, counted, timeout);
        }
    }
}
