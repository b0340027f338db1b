package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.PolicyViolationException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link ProtectedNameScanner} finds, that it never follows a link, that it lists only what changed since the
 * last scan, and that a change anywhere is still found however a program makes it.
 */
class ProtectedNameScannerTest {

    private static final List<String> NAMES = List.of(".git", ".codeexec");

    @TempDir
    Path tmp;

    private Path root;

    /** The scanner's clock runs an hour ahead, so that every directory made before a scan counts as settled. */
    private final ProtectedNameScanner settled = new ProtectedNameScanner(
            () -> System.currentTimeMillis() * 1_000_000L + TimeUnit.HOURS.toNanos(1), 1_000, 10_000);

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createDirectories(tmp.resolve("ws")).toRealPath();
    }

    private Map<String, ProtectedNameScanner.Type> find(ProtectedNameScanner s) {
        return s.find(root, NAMES, p -> false).stream().collect(Collectors.toMap(
                f -> root.relativize(Path.of(f.path())).toString(), ProtectedNameScanner.Found::type));
    }

    /**
     * Waits until the file system's clock has moved past {@code dir}'s change time, so that a change made now gets a
     * different one (file times advance in coarse steps).
     */
    private void waitPastChangeTime(Path dir) throws Exception {
        long before = ctime(dir);
        Path probe = tmp.resolve("clock-probe");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            Files.writeString(probe, "x");
            if (ctime(probe) > before) {
                return;
            }
            assertThat(System.nanoTime()).as("the file system clock advances").isLessThan(deadline);
            Thread.sleep(1);
        }
    }

    private static long ctime(Path p) throws IOException {
        return ((FileTime) Files.getAttribute(p, "unix:ctime", LinkOption.NOFOLLOW_LINKS)).to(TimeUnit.NANOSECONDS);
    }

    @Test
    void should_find_protected_names_at_every_depth_without_entering_or_following_them() throws Exception {
        Files.createDirectories(root.resolve(".git/hooks"));
        Files.createDirectories(root.resolve("work/a/b/c/.git/modules/x/.git"));
        Files.createDirectories(root.resolve("work/wt"));
        Files.writeString(root.resolve("work/wt/.git"), "gitdir: ../a/b/c/.git\n");
        Files.createDirectories(root.resolve("work/p"));
        Files.createSymbolicLink(root.resolve("work/p/.git"), root.resolve("work/a/b/c/.git"));
        Files.createDirectories(root.resolve("out/.codeexec"));
        Path outside = Files.createDirectories(tmp.resolve("outside/repo/.git"));
        Files.createSymbolicLink(root.resolve("work/linked"), outside.getParent());
        Files.createDirectories(root.resolve("work/fifo-dir-real"));
        new ProcessBuilder("mkfifo", root.resolve("work/fifo-dir-real/.git").toString()).start().waitFor();

        Map<String, ProtectedNameScanner.Type> found = find(new ProtectedNameScanner());

        assertThat(found).containsOnly(
                Map.entry(".git", ProtectedNameScanner.Type.DIRECTORY),
                Map.entry("work/a/b/c/.git", ProtectedNameScanner.Type.DIRECTORY),
                Map.entry("work/wt/.git", ProtectedNameScanner.Type.FILE),
                Map.entry("work/p/.git", ProtectedNameScanner.Type.LINK),
                Map.entry("out/.codeexec", ProtectedNameScanner.Type.DIRECTORY),
                Map.entry("work/fifo-dir-real/.git", ProtectedNameScanner.Type.OTHER));
        // not entered (modules/x/.git lies inside a .git), not followed (work/linked leads outside)
    }

    @Test
    void should_not_enter_what_the_caller_skips() throws IOException {
        Files.createDirectories(root.resolve("work/hidden/.git"));
        Files.createDirectories(root.resolve("work/shown/.git"));
        String hidden = root.resolve("work/hidden").toString();

        List<ProtectedNameScanner.Found> found = new ProtectedNameScanner().find(root, NAMES, hidden::equals);

        assertThat(found).extracting(ProtectedNameScanner.Found::path)
                .containsExactly(root.resolve("work/shown/.git").toString());
    }

    @Test
    void should_list_nothing_again_when_nothing_changed_since_a_settled_scan() throws IOException {
        for (int i = 0; i < 20; i++) {
            Files.createDirectories(root.resolve("work/p" + i + "/src"));
        }
        Files.createDirectories(root.resolve("work/p3/.git"));

        Map<String, ProtectedNameScanner.Type> first = find(settled);
        assertThat(settled.listedLastScan(root)).isEqualTo(2 + 20 * 2); // ws, work, each p and its src
        Map<String, ProtectedNameScanner.Type> second = find(settled);

        assertThat(second).isEqualTo(first).containsOnlyKeys("work/p3/.git");
        assertThat(settled.listedLastScan(root)).as("every directory remembered").isZero();
        assertThat(settled.remembered(root)).isEqualTo(42);
    }

    @Test
    void should_list_again_a_directory_changed_too_recently_to_trust_its_time() throws IOException {
        Files.createDirectories(root.resolve("work/p"));
        long newest = ctime(root.resolve("work/p"));
        // A clock a millisecond after the last change: every directory is too fresh to trust its listing.
        ProtectedNameScanner fresh = new ProtectedNameScanner(() -> newest + 1_000_000L, 1_000, 10_000);

        find(fresh);
        find(fresh);

        assertThat(fresh.listedLastScan(root)).isEqualTo(3);
    }

    @Test
    void should_find_what_a_program_created_deep_in_a_tree_the_last_scan_remembered() throws Exception {
        Files.createDirectories(root.resolve("work/a/b/c/d"));
        Files.createDirectories(root.resolve("work/x/y"));
        assertThat(find(settled)).isEmpty();
        waitPastChangeTime(root.resolve("work/a/b/c/d"));

        Files.createDirectories(root.resolve("work/a/b/c/d/.git/hooks"));
        // ... and, as an attacker would, puts the directory's modification time back: its ctime still moves.
        Files.setLastModifiedTime(root.resolve("work/a/b/c/d"), FileTime.fromMillis(0));

        assertThat(find(settled)).containsOnlyKeys("work/a/b/c/d/.git");
        assertThat(settled.listedLastScan(root)).as("only the changed directory").isEqualTo(1);
    }

    @Test
    void should_find_a_repository_moved_or_swapped_into_a_remembered_tree() throws Exception {
        Files.createDirectories(root.resolve("work/keep"));
        Files.createDirectories(root.resolve("work/swap/inner"));
        Path elsewhere = Files.createDirectories(root.resolve("tmp/staging/repo/.git"));
        assertThat(find(settled)).containsOnlyKeys("tmp/staging/repo/.git");
        waitPastChangeTime(root.resolve("work/swap/inner"));

        // Moved in whole (the moved directory is new to its parent), and a directory replaced under its name.
        Files.move(elsewhere.getParent(), root.resolve("work/keep/repo"));
        Files.delete(root.resolve("work/swap/inner"));
        Files.delete(root.resolve("work/swap"));
        Files.createDirectories(root.resolve("work/swap/inner/.git"));

        assertThat(find(settled)).containsOnlyKeys("work/keep/repo/.git", "work/swap/inner/.git");
    }

    @Test
    void should_stop_reporting_what_was_removed_and_forget_a_root() throws Exception {
        Files.createDirectories(root.resolve("work/p/.git"));
        assertThat(find(settled)).containsOnlyKeys("work/p/.git");
        waitPastChangeTime(root.resolve("work/p"));
        Files.delete(root.resolve("work/p/.git"));

        assertThat(find(settled)).isEmpty();
        assertThat(settled.remembered(root)).isPositive();
        settled.forget(root.getParent());
        assertThat(settled.remembered(root)).isZero();
    }

    @Test
    void should_refuse_a_tree_with_more_directories_or_entries_than_its_bounds() throws IOException {
        for (int i = 0; i < 12; i++) {
            Files.createDirectories(root.resolve("d" + i));
        }
        ProtectedNameScanner fewDirectories = new ProtectedNameScanner(System::nanoTime, 10, 1_000);
        assertThatThrownBy(() -> fewDirectories.find(root, NAMES, p -> false))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining("more than 10 directories");
        ProtectedNameScanner fewEntries = new ProtectedNameScanner(System::nanoTime, 1_000, 5);
        assertThatThrownBy(() -> fewEntries.find(root, NAMES, p -> false))
                .isInstanceOf(PolicyViolationException.class).hasMessageContaining("more than 5 entries");
        // Positive control: within the bounds the same tree is scanned.
        assertThat(new ProtectedNameScanner(System::nanoTime, 13, 12).find(root, NAMES, p -> false)).isEmpty();
    }

    @Test
    void should_scan_again_in_full_when_the_protected_names_change() throws IOException {
        Files.createDirectories(root.resolve("work/p/.hg"));
        assertThat(find(settled)).isEmpty();

        List<ProtectedNameScanner.Found> found = settled.find(root, List.of(".git", ".hg"), p -> false);

        assertThat(found).extracting(ProtectedNameScanner.Found::path)
                .containsExactly(root.resolve("work/p/.hg").toString());
    }

    @Test
    void should_forget_the_least_recently_scanned_roots_when_it_remembers_too_much() throws IOException {
        Path a = Files.createDirectories(tmp.resolve("a/x/y")).getParent().getParent();
        Path b = Files.createDirectories(tmp.resolve("b/x/y")).getParent().getParent();
        Path c = Files.createDirectories(tmp.resolve("c/x/y")).getParent().getParent();
        ProtectedNameScanner small = new ProtectedNameScanner(System::nanoTime, 100, 100, 7);
        for (Path r : List.of(a, b, c)) {
            small.find(r, NAMES, p -> false);
        }

        assertThat(small.remembered(null)).as("at most 7 directories in all").isEqualTo(6);
        assertThat(small.remembered(a)).as("the eldest forgotten").isZero();
        assertThat(small.remembered(b)).isEqualTo(3);
        assertThat(small.remembered(c)).isEqualTo(3);
        small.forget(b);
        assertThat(small.remembered(null)).isEqualTo(3);
    }

    @Test
    void should_trust_a_listing_only_when_the_ctime_is_older_than_a_clock_step() {
        long now = TimeUnit.SECONDS.toNanos(1_700_000_000L) + 500_000_000L;
        long ms = 1_000_000L;
        assertThat(ProtectedNameScanner.settled(now - 150 * ms, now)).isTrue();
        assertThat(ProtectedNameScanner.settled(now - 50 * ms, now)).as("within a tick's margin").isFalse();
        // A ctime of whole seconds may come from a file system without sub-second times: two seconds' margin.
        long whole = TimeUnit.SECONDS.toNanos(1_700_000_000L - 1);
        assertThat(ProtectedNameScanner.settled(whole, now)).isFalse();
        assertThat(ProtectedNameScanner.settled(whole, now + TimeUnit.SECONDS.toNanos(1))).isTrue();
    }
}
