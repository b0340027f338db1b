package dev.codeexec.artifact;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code latest} hint of {@link FileSystemArtifactService}: what a crash, a torn write, a restored backup or a
 * racing writer can leave in it, and that a save and a load of the latest version are right whatever it holds
 * (the hint is checked, probed past or rebuilt, never trusted), and that it is repaired afterwards.
 */
class FileSystemArtifactServiceLatestHintTest {

    private static final String NAME = "reports/q1.md";

    @TempDir
    Path tmp;

    private Path root;
    private FileSystemArtifactService service;

    @BeforeEach
    void createService() {
        root = tmp.resolve("store");
        service = FileSystemArtifactService.at(root);
    }

    private Path versionsDir() {
        return root.resolve(NAME).resolve(FileSystemArtifactService.VERSIONS_DIR);
    }

    private Path hint() {
        return versionsDir().resolve(LatestVersionPointer.FILE);
    }

    private void saveVersions(int count) {
        for (int i = 1; i <= count; i++) {
            assertThat(service.save(NAME, body(i), "text/plain").version()).isEqualTo(i);
        }
    }

    private static byte[] body(int version) {
        return ("version " + version).getBytes(StandardCharsets.UTF_8);
    }

    private int latestVersion() {
        return service.load(NAME).orElseThrow().ref().version();
    }

    private void assertLatestIs(ArtifactService s, int version) {
        assertThat(s.load(NAME)).hasValueSatisfying(a -> {
            assertThat(a.ref().version()).isEqualTo(version);
            assertThat(a.content()).isEqualTo(body(version));
        });
    }

    // ---------------------------------------------------------------- a well-kept hint

    @Test
    void should_point_the_hint_at_each_new_version_when_saving() throws IOException {
        saveVersions(3);

        assertThat(Files.readString(hint())).isEqualTo("3\n");
        assertLatestIs(service, 3);
    }

    // ---------------------------------------------------------------- crash simulations

    @Test
    void should_list_once_and_repair_the_hint_when_it_is_missing() throws IOException {
        saveVersions(5);
        Files.delete(hint()); // a store written before the hint existed, or a crash between rename and hint

        assertLatestIs(service, 5);
        assertThat(Files.readString(hint())).as("the load repaired it").isEqualTo("5\n");

        Files.delete(hint());
        assertThat(service.save(NAME, body(6), "text/plain").version()).isEqualTo(6);
        assertThat(Files.readString(hint())).as("the save repaired it").isEqualTo("6\n");
        assertLatestIs(service, 6);
    }

    @Test
    void should_probe_past_a_hint_that_lags_behind_when_saving_and_loading() throws IOException {
        saveVersions(5);
        Files.writeString(hint(), "2\n"); // a writer crashed before moving it, or two processes raced

        assertLatestIs(service, 5);
        assertThat(service.save(NAME, body(6), "text/plain").version()).isEqualTo(6);
        assertThat(Files.readString(hint())).isEqualTo("6\n");
        assertThat(service.versions(NAME)).containsExactly(1, 2, 3, 4, 5, 6);
    }

    @Test
    void should_list_instead_when_the_hint_lags_further_than_the_probe_budget() throws IOException {
        int count = FileSystemArtifactService.PROBE_BUDGET * 2 + 5;
        saveVersions(count);
        Files.writeString(hint(), "1\n"); // a backup of the hint restored next to newer versions

        assertLatestIs(service, count);
        Files.writeString(hint(), "1\n");
        assertThat(service.save(NAME, body(count + 1), "text/plain").version()).isEqualTo(count + 1);
        assertThat(Files.readString(hint())).isEqualTo((count + 1) + "\n");
        assertThat(service.versions(NAME)).hasSize(count + 1);
    }

    static Stream<Arguments> corruptHints() {
        byte[] garbage = new byte[1024];
        new Random(7).nextBytes(garbage);
        return Stream.of(
                Arguments.of("empty (data lost in a crash)", new byte[0]),
                Arguments.of("torn: no newline", ascii("5")),
                Arguments.of("torn: a prefix of a longer number", ascii("1")),
                Arguments.of("zeros (blocks never written)", new byte[] {0, 0, 0}),
                Arguments.of("not a number", ascii("five\n")),
                Arguments.of("zero", ascii("0\n")),
                Arguments.of("negative", ascii("-3\n")),
                Arguments.of("leading zero", ascii("05\n")),
                Arguments.of("beyond int range", ascii("99999999999\n")),
                Arguments.of("two lines", ascii("5\n5\n")),
                Arguments.of("random bytes", garbage));
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("corruptHints")
    void should_ignore_and_repair_a_corrupt_hint(String what, byte[] content) throws IOException {
        saveVersions(5);
        Files.write(hint(), content);

        assertLatestIs(service, 5);
        Files.write(hint(), content);
        assertThat(service.save(NAME, body(6), "text/plain").version()).isEqualTo(6);
        assertThat(Files.readString(hint())).isEqualTo("6\n");
        assertThat(service.versions(NAME)).containsExactly(1, 2, 3, 4, 5, 6);
    }

    @Test
    void should_not_skip_numbers_when_the_hint_points_at_a_version_that_does_not_exist() throws IOException {
        saveVersions(5);
        Files.writeString(hint(), "5000\n"); // ahead of the truth: trusting it would make the next save 5001

        assertLatestIs(service, 5);
        Files.writeString(hint(), "5000\n");
        assertThat(service.save(NAME, body(6), "text/plain").version()).isEqualTo(6);
        assertThat(service.versions(NAME)).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(Files.exists(versionsDir().resolve("v5001.json"))).isFalse();
    }

    @Test
    void should_start_at_1_when_a_hint_survived_a_delete_of_every_version() throws IOException {
        saveVersions(3);
        Path dir = versionsDir();
        try (Stream<Path> files = Files.list(dir)) { // a delete by an older release, which left the hint
            for (Path p : files.filter(p -> !p.getFileName().toString().equals(LatestVersionPointer.FILE)).toList()) {
                Files.delete(p);
            }
        }

        assertThat(service.load(NAME)).isEmpty();
        assertThat(service.save(NAME, body(1), "text/plain").version()).isEqualTo(1);
        assertLatestIs(service, 1);
    }

    @Test
    void should_load_the_version_below_when_the_hint_points_at_a_claim_without_bytes() throws IOException {
        saveVersions(3);
        // A save that crashed after claiming 4 (or is still writing it), whose hint was written by a repair.
        Files.writeString(versionsDir().resolve("v4.json"), "{\"mimeType\":\"text/plain\"}");
        Files.writeString(hint(), "4\n");

        assertLatestIs(service, 3);
        assertThat(service.save(NAME, body(5), "text/plain").version()).as("4 stays burned").isEqualTo(5);
        assertLatestIs(service, 5);
        assertThat(service.versions(NAME)).containsExactly(1, 2, 3, 5);
    }

    @Test
    void should_see_versions_above_the_hint_when_a_claim_in_flight_sits_between() throws IOException {
        saveVersions(3);
        Files.writeString(hint(), "2\n");
        // 4 is claimed but its bytes are not there yet; 5 was published by a faster writer that then crashed.
        Files.writeString(versionsDir().resolve("v4.json"), "{}");
        Path five = versionsDir().resolve("v5.bin");
        FileSystemArtifactService.at(tmp.resolve("donor")).save("x", body(5), "text/plain");
        Path donor = tmp.resolve("donor/x/@versions");
        Files.copy(donor.resolve("v1.bin"), five);
        Files.copy(donor.resolve("v1.json"), versionsDir().resolve("v5.json"));

        assertLatestIs(service, 5);
        assertThat(service.save(NAME, body(6), "text/plain").version()).isEqualTo(6);
    }

    @Test
    void should_not_follow_a_link_or_read_a_directory_planted_in_place_of_the_hint() throws IOException {
        saveVersions(5);
        Path outside = Files.writeString(tmp.resolve("outside-hint"), "2\n"); // valid content, but not ours
        Files.delete(hint());
        Files.createSymbolicLink(hint(), outside);

        assertLatestIs(service, 5);
        assertThat(Files.isSymbolicLink(hint())).as("the repair replaced the link itself").isFalse();
        assertThat(Files.readString(outside)).as("and left its target alone").isEqualTo("2\n");

        Files.delete(hint());
        Files.createSymbolicLink(hint(), outside);
        assertThat(service.save(NAME, body(6), "text/plain").version()).isEqualTo(6);
        assertThat(Files.readString(outside)).isEqualTo("2\n");
        assertThat(Files.readString(hint(), StandardCharsets.US_ASCII)).isEqualTo("6\n");
        assertThat(Files.isRegularFile(hint(), LinkOption.NOFOLLOW_LINKS)).isTrue();

        Files.delete(hint());
        Files.createDirectory(hint()); // cannot be replaced by a rename: every access lists, and stays right
        assertLatestIs(service, 6);
        assertThat(service.save(NAME, body(7), "text/plain").version()).isEqualTo(7);
        assertLatestIs(service, 7);
    }

    @Test
    void should_remove_the_hint_when_deleting_the_name() {
        saveVersions(2);

        service.delete(NAME);

        assertThat(Files.exists(root.resolve(NAME))).isFalse();
        assertThat(service.save(NAME, body(1), "text/plain").version()).isEqualTo(1);
    }

    // ---------------------------------------------------------------- concurrency

    /**
     * Threads of two instances over one root save one name while another thread keeps damaging the hint (stale,
     * ahead, torn, missing) and a reader loads the latest version. Every save gets its own number, the numbers are
     * exactly 1..N, and every load returns a version at least as new as every save finished before it started.
     */
    @Test
    void should_give_distinct_versions_and_fresh_loads_when_the_hint_is_damaged_under_concurrent_writers()
            throws Exception {
        FileSystemArtifactService other = FileSystemArtifactService.at(root);
        int writers = 4;
        int savesEach = 40;
        ExecutorService pool = Executors.newFixedThreadPool(writers + 2);
        CountDownLatch start = new CountDownLatch(1);
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicInteger newestFinished = new AtomicInteger();
        Map<Integer, String> saved = new ConcurrentHashMap<>();
        service.save(NAME, utf8("seed"), "text/plain"); // so that the version directory exists for the vandal
        saved.put(1, "seed");
        newestFinished.set(1);
        try {
            List<Future<?>> saves = new ArrayList<>();
            for (int t = 0; t < writers; t++) {
                ArtifactService s = t % 2 == 0 ? service : other;
                int thread = t;
                saves.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < savesEach; i++) {
                        String body = "t" + thread + "-" + i;
                        int v = s.save(NAME, utf8(body), "text/plain").version();
                        assertThat(saved.put(v, body)).as("version %s given twice", v).isNull();
                        newestFinished.accumulateAndGet(v, Math::max);
                    }
                    return null;
                }));
            }
            Future<Integer> vandal = pool.submit(() -> {
                start.await();
                Random random = new Random(11);
                String[] damage = {"1\n", "999999\n", "", "4", "x\n", null};
                int acts = 0;
                while (writing.get()) {
                    String d = damage[random.nextInt(damage.length)];
                    try {
                        if (d == null) {
                            Files.deleteIfExists(hint());
                        } else {
                            Files.writeString(hint(), d); // in place, so readers can see it torn as well
                        }
                        acts++;
                    } catch (IOException raced) {
                        // the service renamed a new hint over it meanwhile; try again
                    }
                    Thread.sleep(1);
                }
                return acts;
            });
            Future<Integer> reader = pool.submit(() -> {
                start.await();
                int loads = 0;
                int previous = 0;
                while (writing.get()) {
                    int floor = newestFinished.get();
                    int v = (loads % 2 == 0 ? service : other).load(NAME).orElseThrow().ref().version();
                    assertThat(v).as("load after version %s finished", floor).isGreaterThanOrEqualTo(floor);
                    assertThat(v).as("loads never go back").isGreaterThanOrEqualTo(previous);
                    previous = v;
                    loads++;
                }
                return loads;
            });
            start.countDown();
            for (Future<?> f : saves) {
                f.get(180, TimeUnit.SECONDS);
            }
            writing.set(false);
            assertThat(vandal.get(60, TimeUnit.SECONDS)).as("the hint was damaged").isPositive();
            assertThat(reader.get(60, TimeUnit.SECONDS)).as("loads ran").isPositive();

            int total = writers * savesEach + 1;
            assertThat(service.versions(NAME)).containsExactlyElementsOf(IntStream.rangeClosed(1, total).boxed().toList());
            saved.forEach((v, body) -> assertThat(other.load(NAME, v).content()).isEqualTo(utf8(body)));
            assertThat(latestVersion()).isEqualTo(total);
            assertThat(service.save(NAME, utf8("after"), "text/plain").version()).isEqualTo(total + 1);
        } finally {
            writing.set(false);
            pool.shutdownNow();
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
