package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AccountFilesTest {

    @TempDir
    Path tmp;

    @Test
    void should_write_a_new_file_when_the_host_file_changed_between_runs() throws IOException {
        AccountFiles files = new AccountFiles(tmp);
        String home = "/ws/a/home";
        String before = files.file(home, "passwd", "root:x:0:0::/root:/bin/sh\nsandbox:x:99999:99999::/ws/a/home:/bin/sh\n");
        // The host's passwd changes between runs (an account removed): the next run must see the new text.
        String after = files.file(home, "passwd", "sandbox:x:99999:99999::/ws/a/home:/bin/sh\n");
        assertThat(after).isNotEqualTo(before);
        assertThat(Files.readString(Path.of(after))).isEqualTo("sandbox:x:99999:99999::/ws/a/home:/bin/sh\n");
        // The replaced file is never rewritten in place: a run that has it mounted keeps what it planned with.
        assertThat(Files.readString(Path.of(before))).startsWith("root:x:0:0");
        // Positive control: the same text again reuses the latest file, written once.
        assertThat(files.file(home, "passwd", "sandbox:x:99999:99999::/ws/a/home:/bin/sh\n")).isEqualTo(after);
        assertThat(files.written(home)).isEqualTo(2);
    }

    @Test
    void should_reuse_a_file_only_for_the_same_home_and_write_it_again_when_it_vanished() throws IOException {
        AccountFiles files = new AccountFiles(tmp);
        String a = files.file("/ws/a/home", "group", "g:x:1:\n");
        assertThat(files.file("/ws/a/home", "group", "g:x:1:\n")).isEqualTo(a);
        assertThat(files.file("/ws/b/home", "group", "g:x:1:\n")).isNotEqualTo(a);
        Files.delete(Path.of(a));
        String again = files.file("/ws/a/home", "group", "g:x:1:\n");
        assertThat(again).isNotEqualTo(a);
        assertThat(Files.readString(Path.of(again))).isEqualTo("g:x:1:\n");
    }

    @Test
    void should_remove_the_files_of_a_forgotten_workspace_and_keep_the_others() {
        AccountFiles files = new AccountFiles(tmp);
        Path a = Path.of(files.file("/ws/a/home", "passwd", "a\n"));
        Path replaced = Path.of(files.file("/ws/a/home", "passwd", "a2\n"));
        Path b = Path.of(files.file("/ws/b/home", "passwd", "b\n"));
        files.forget(Path.of("/ws/a"));
        assertThat(a).doesNotExist();
        assertThat(replaced).doesNotExist();
        assertThat(b).exists();
        assertThat(files.written("/ws/a/home")).isZero();
    }
}
