package dev.codeexec.kubernetes;

import dev.codeexec.spi.ContainerShell;
import static dev.codeexec.testing.TarArchives.archive;
import static dev.codeexec.testing.TarArchives.file;
import static dev.codeexec.testing.TarArchives.link;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.RemoteEntry;
import dev.codeexec.workspace.spi.WorkspaceFiles.WalkAction;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * {@link PodFiles} against a scripted pod (no pod runs): what a hostile or broken pod sends back (tar entries with
 * {@code ..} or absolute names, listing names that climb out, more bytes than a window asked for, a file status that
 * is not one) is refused, each next to the well-formed answer that passes; and every command is an argv whose script
 * is a constant, the data only in positional arguments.
 */
class PodFilesTest {

    private static final String ROOT = "/codeexec/workspace";

    private final ScriptedPod pod = new ScriptedPod();
    private final PodFiles files = new PodFiles("p", pod, ROOT, 10001, 10001, PodFiles.Limits.DEFAULT);

    // ------------------------------------------------------------------ archives from the pod

    @Test
    void should_export_a_file_when_the_pod_sends_a_well_formed_archive() {
        pod.stat(ROOT + "/a.txt", "81a4 5 1700000000\n");
        pod.tar = archive(file("a.txt", "alpha"));

        assertThat(export("a.txt")).isEqualTo("alpha");
        assertThat(pod.argvs).contains(List.of("tar", "-c", "-f", "-", "-C", ROOT, "--", "a.txt"));
    }

    @Test
    void should_refuse_an_export_when_the_pod_sends_an_entry_climbing_out_with_dot_dot() {
        pod.stat(ROOT + "/a.txt", "81a4 5 1700000000\n");
        pod.tar = archive(file("a.txt/../../../etc/passwd", "root:x:0:0"));

        assertThatThrownBy(() -> export("a.txt")).isInstanceOf(PathEscapeException.class)
                .hasMessageContaining("the pod sent an archive entry with '..'");
    }

    @Test
    void should_refuse_an_export_when_the_pod_sends_an_entry_with_an_absolute_name() {
        pod.stat(ROOT + "/a.txt", "81a4 5 1700000000\n");
        pod.tar = archive(file("/etc/passwd", "root:x:0:0"));

        assertThatThrownBy(() -> export("a.txt")).isInstanceOf(PathEscapeException.class)
                .hasMessageContaining("absolute name");
    }

    @Test
    void should_refuse_an_export_when_the_pod_sends_a_link_for_the_file() {
        pod.stat(ROOT + "/a.txt", "81a4 5 1700000000\n");
        pod.tar = archive(link("a.txt", "/etc/shadow"));

        assertThatThrownBy(() -> export("a.txt")).isInstanceOf(dev.codeexec.engine.InvalidSpecException.class)
                .hasMessageContaining("is not a regular file");
    }

    // ------------------------------------------------------------------ listings from the pod

    @Test
    void should_walk_the_entries_when_the_pod_sends_a_well_formed_listing() {
        pod.stat(ROOT + "/d", "41ed 4096 1700000000\n");
        pod.listing = "d 755 4096 1700000000.5000000000 sub\0f 644 5 1700000000.0000000000 sub/a b\nc.txt\0"
                + "l 777 11 1700000000.0000000000 out\0";

        List<String> seen = new ArrayList<>();
        files.walk("d", e -> {
            seen.add(e.path() + " " + e.type() + " " + e.size() + " " + Integer.toOctalString(e.mode()));
            return WalkAction.CONTINUE;
        });

        assertThat(seen).containsExactly("d/sub DIRECTORY 0 755", "d/sub/a b\nc.txt FILE 5 644", "d/out LINK 0 777");
    }

    @Test
    void should_refuse_a_listing_when_the_pod_sends_a_name_climbing_out() {
        pod.stat(ROOT + "/d", "41ed 4096 1700000000\n");
        pod.listing = "f 644 5 1700000000.0 ok.txt\0f 644 6 1700000000.0 ../../etc/passwd\0";
        List<String> seen = new ArrayList<>();

        assertThatThrownBy(() -> files.walk("d", e -> {
            seen.add(e.path());
            return WalkAction.CONTINUE;
        })).isInstanceOf(PathEscapeException.class).hasMessageContaining("leaves the listed directory");
        assertThat(seen).containsExactly("d/ok.txt");
    }

    @Test
    void should_refuse_a_listing_when_the_pod_sends_an_absolute_name() {
        pod.stat(ROOT + "/d", "41ed 4096 1700000000\n");
        pod.listing = "f 644 6 1700000000.0 /etc/passwd\0";

        assertThatThrownBy(() -> files.walk("d", e -> WalkAction.CONTINUE)).isInstanceOf(PathEscapeException.class);
    }

    @Test
    void should_fail_typed_when_a_listing_record_is_not_well_formed() {
        pod.stat(ROOT + "/d", "41ed 4096 1700000000\n");
        pod.listing = "f 644 five 1700000000.0 a.txt\0";

        assertThatThrownBy(() -> files.walk("d", e -> WalkAction.CONTINUE)).isInstanceOf(CodeExecException.class)
                .hasMessageContaining("not well formed");
    }

    // ------------------------------------------------------------------ windows and file status

    @Test
    void should_return_the_window_when_the_pod_sends_what_was_asked() {
        pod.stat(ROOT + "/a.txt", "81a4 100 1700000000\n");
        pod.window = "100\nhello";

        assertThat(files.read("a.txt", 10, 5)).satisfies(w -> {
            assertThat(new String(w.content(), StandardCharsets.UTF_8)).isEqualTo("hello");
            assertThat(w.size()).isEqualTo(100);
        });
        assertThat(pod.argvs).contains(PodFiles.script(PodFiles.WINDOW, ROOT + "/a.txt", "10", "5"));
    }

    @Test
    void should_refuse_a_window_when_the_pod_sends_more_than_asked() {
        pod.stat(ROOT + "/a.txt", "81a4 100 1700000000\n");
        pod.window = "100\n" + "x".repeat(1000);

        assertThatThrownBy(() -> files.read("a.txt", 0, 5)).isInstanceOf(CodeExecException.class)
                .hasMessageContaining("more than");
    }

    @Test
    void should_parse_files_directories_and_resolved_links_when_the_pod_stats_them() {
        assertThat(PodFiles.parseLstat(utf8("81a4 42 1700000000\n"), "a"))
                .isEqualTo(RemoteEntry.of(EntryType.FILE, 42, 0644, Instant.ofEpochSecond(1700000000)));
        assertThat(PodFiles.parseLstat(utf8("41ed 4096 1700000000\n"), "d").type()).isEqualTo(EntryType.DIRECTORY);
        assertThat(PodFiles.parseLstat(utf8("11a4 0 1700000000\n"), "fifo").type()).isEqualTo(EntryType.OTHER);
        assertThat(PodFiles.parseLstat(utf8("a1ff 9 1700000000\n41ed\n" + ROOT + "/d\nx"), "l"))
                .satisfies(e -> {
                    assertThat(e.type()).isEqualTo(EntryType.LINK);
                    assertThat(e.linkTarget()).isEqualTo(ROOT + "/d\nx");
                    assertThat(e.targetType()).isEqualTo(EntryType.DIRECTORY);
                });
        assertThat(PodFiles.parseLstat(utf8("a1ff 9 1700000000\n"), "dangling").linkTarget()).isNull();
        assertThat(PodFiles.parseLstat(utf8("a1ff 9 1700000000\n-\nrelative"), "l").linkTarget()).isNull();
    }

    @Test
    void should_fail_typed_when_the_pod_sends_a_file_status_that_is_not_one() {
        assertThatThrownBy(() -> PodFiles.parseLstat(utf8("hello\n"), "a")).isInstanceOf(CodeExecException.class);
        assertThatThrownBy(() -> PodFiles.parseLstat(utf8("zz 1 2\n"), "a")).isInstanceOf(CodeExecException.class);
    }

    // ------------------------------------------------------------------ commands

    @Test
    void should_pass_every_name_as_its_own_argument_when_names_look_like_shell_or_options() {
        String[] hostile = {"a'b", "$(touch x)", "`id`", "l\nm", "-rf", "--help", "; rm -rf ~", "*", "a\"b"};
        for (String name : hostile) {
            pod.stat(ROOT + "/" + name, "81a4 5 1700000000\n");
            pod.window = "5\nalpha";
            files.read(name, 0, 5);
            files.delete(name);
        }

        List<String> scripts = List.of(PodFiles.LSTAT, PodFiles.WINDOW, ContainerShell.DELETE, ContainerShell.REPLACE);
        for (List<String> argv : pod.argvs) {
            if (argv.get(0).equals("sh")) {
                assertThat(argv.subList(0, 4)).as("%s", argv).satisfies(a -> {
                    assertThat(a.get(1)).isEqualTo("-c");
                    assertThat(scripts).contains(a.get(2));
                    assertThat(a.get(3)).isEqualTo("sh");
                });
                assertThat(argv.subList(4, argv.size())).allMatch(a -> a.startsWith(ROOT) || a.matches("[0-9]+"));
            }
        }
        for (String name : hostile) {
            assertThat(pod.argvs).contains(PodFiles.script(ContainerShell.DELETE, ROOT + "/" + name));
        }
    }

    // ------------------------------------------------------------------ helpers

    private String export(String path) {
        String[] got = {null};
        files.export(List.of(path), (p, size, in) -> {
            got[0] = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            return true;
        });
        return got[0];
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Answers the commands of {@link PodFiles} from fixed data; records every argv. */
    static final class ScriptedPod implements PodCommands {

        final List<List<String>> argvs = new CopyOnWriteArrayList<>();
        final Map<String, String> stats = new ConcurrentHashMap<>();
        volatile byte[] tar = new byte[0];
        volatile String listing = "";
        volatile String window = "";

        ScriptedPod() {
            stat(ROOT, "41ed 4096 1700000000\n");
        }

        void stat(String path, String answer) {
            stats.put(path, answer);
        }

        @Override
        public Result run(String pod, List<String> argv, InputStream stdin, OutputStream stdout, Duration timeout) {
            argvs.add(List.copyOf(argv));
            try {
                if (argv.get(0).equals("sh") && argv.get(2).equals(PodFiles.LSTAT)) {
                    String s = stats.get(argv.get(4));
                    if (s == null) {
                        return new Result(3, "");
                    }
                    write(stdout, utf8(s));
                } else if (argv.get(0).equals("sh") && argv.get(2).equals(PodFiles.WINDOW)) {
                    write(stdout, utf8(window));
                } else if (argv.get(0).equals("tar") && argv.get(1).equals("-c")) {
                    write(stdout, tar);
                } else if (argv.get(0).equals("find")) {
                    write(stdout, utf8(listing));
                }
                return new Result(0, "");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private static void write(OutputStream out, byte[] bytes) throws IOException {
            if (out != null) {
                out.write(bytes);
                out.close();
            }
        }
    }
}
