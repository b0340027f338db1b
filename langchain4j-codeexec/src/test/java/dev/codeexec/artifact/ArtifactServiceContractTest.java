package dev.codeexec.artifact;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The behaviour every {@link ArtifactService} shares. An implementation's test class extends this and supplies a
 * fresh, empty service per test; a custom store (database, object store) can run it from this module's test jar.
 * Messages of refused names are checked against this package's wording; a store with its own wording overrides
 * {@link #assertNameRefused}.
 */
public abstract class ArtifactServiceContractTest {

    /** A new, empty service. Called once before each test. */
    protected abstract ArtifactService newService();

    protected ArtifactService service;

    @BeforeEach
    protected void createService() {
        service = newService();
    }

    protected static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    // ---------------------------------------------------------------- save / load / versions

    @Test
    void should_number_versions_from_1_when_saving_a_name_repeatedly() {
        ArtifactRef first = service.save("report.md", utf8("one"), "text/markdown");
        ArtifactRef second = service.save("report.md", utf8("two"), "text/markdown");
        ArtifactRef third = service.save("report.md", utf8("three"), "text/markdown");

        assertThat(first).isEqualTo(new ArtifactRef("report.md", 1));
        assertThat(second.toString()).isEqualTo("artifact://report.md@2");
        assertThat(third.version()).isEqualTo(3);
        assertThat(service.versions("report.md")).containsExactly(1, 2, 3);
    }

    @Test
    void should_save_what_a_writer_pushes_when_saving_written() {
        byte[] big = new byte[200 * 1024 + 7];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) (i * 31);
        }
        ArtifactRef ref = service.saveWritten("pack.bin", out -> {
            out.write('<');
            out.write(big, 0, 1000);
            out.write(big, 1000, big.length - 1000);
            out.write('>');
        }, "application/x-test");

        Artifact a = service.load(ref);
        assertThat(ref).isEqualTo(new ArtifactRef("pack.bin", 1));
        assertThat(a.size()).isEqualTo(big.length + 2L);
        assertThat(a.content()[0]).isEqualTo((byte) '<');
        assertThat(java.util.Arrays.copyOfRange(a.content(), 1, big.length + 1)).isEqualTo(big);
        assertThat(a.mimeType()).isEqualTo("application/x-test");
    }

    @Test
    void should_save_no_version_when_a_writer_fails() {
        java.io.IOException boom = new java.io.IOException("source gone");
        IllegalStateException own = new IllegalStateException("bound crossed");

        assertThatThrownBy(() -> service.saveWritten("pack.bin", out -> {
            out.write(new byte[100_000]);
            throw boom;
        }, null)).isInstanceOf(java.io.UncheckedIOException.class).hasRootCauseMessage("source gone");
        assertThatThrownBy(() -> service.saveWritten("pack.bin", out -> {
            out.write(new byte[100_000]);
            throw own;
        }, null)).isSameAs(own);
        assertThat(service.versions("pack.bin")).isEmpty();
        // The control: a writer that finishes saves version 1.
        assertThat(service.saveWritten("pack.bin", out -> out.write(1), null).version()).isEqualTo(1);
    }

    @Test
    void should_load_each_version_with_its_bytes_and_mime_type_when_asked_by_number() {
        service.save("data.bin", new byte[] {0, 1, 2, (byte) 0xff}, "application/x-test");
        service.save("data.bin", utf8("second"), "text/plain; charset=utf-8");

        Artifact v1 = service.load("data.bin", 1);
        Artifact v2 = service.load("data.bin", 2);

        assertThat(v1.content()).containsExactly(0, 1, 2, 0xff);
        assertThat(v1.mimeType()).isEqualTo("application/x-test");
        assertThat(v1.ref()).isEqualTo(new ArtifactRef("data.bin", 1));
        assertThat(v2.content()).isEqualTo(utf8("second"));
        assertThat(v2.mimeType()).isEqualTo("text/plain; charset=utf-8");
    }

    @Test
    void should_load_latest_when_no_version_is_given() {
        service.save("notes.txt", utf8("old"), "text/plain");
        service.save("notes.txt", utf8("new"), "text/plain");

        assertThat(service.load("notes.txt")).hasValueSatisfying(a -> {
            assertThat(a.content()).isEqualTo(utf8("new"));
            assertThat(a.ref().version()).isEqualTo(2);
        });
        assertThat(service.load(ArtifactRef.parse("artifact://notes.txt")).content()).isEqualTo(utf8("new"));
        assertThat(service.load(ArtifactRef.parse("artifact://notes.txt@1")).content()).isEqualTo(utf8("old"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   "})
    void should_store_octet_stream_when_mime_type_is_blank(String mime) {
        service.save("blank", utf8("x"), mime);

        assertThat(service.load("blank", 1).mimeType()).isEqualTo("application/octet-stream");
    }

    @Test
    void should_store_octet_stream_when_mime_type_is_null() {
        service.save("nullmime", utf8("x"), null);

        assertThat(service.load("nullmime", 1).mimeType()).isEqualTo("application/octet-stream");
    }

    @Test
    void should_keep_stored_bytes_when_the_caller_changes_its_arrays() {
        byte[] content = utf8("original");
        service.save("copy", content, "text/plain");
        content[0] = 'X';
        service.load("copy", 1).content()[0] = 'Y';

        assertThat(service.load("copy", 1).content()).isEqualTo(utf8("original"));
    }

    @Test
    void should_store_empty_content_when_given_zero_bytes() {
        service.save("empty", new byte[0], "text/plain");

        assertThat(service.load("empty", 1).content()).isEmpty();
        assertThat(service.load("empty", 1).size()).isZero();
    }

    @Test
    void should_refuse_null_content() {
        assertThatThrownBy(() -> service.save("x", null, "text/plain")).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("content");
        assertThat(service.names()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"text/plain\r\nX-Injected: 1", "text/plain\u0000", "text/pl\u00e4in"})
    void should_refuse_mime_type_when_it_has_control_or_non_ascii_characters(String mime) {
        assertThatThrownBy(() -> service.save("m", utf8("x"), mime)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("mimeType");
        assertThat(service.versions("m")).isEmpty();
    }

    @Test
    void should_refuse_mime_type_when_longer_than_255_characters() {
        assertThatThrownBy(() -> service.save("m", utf8("x"), "text/" + "x".repeat(251)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("255");
        assertThatCode(() -> service.save("m", utf8("x"), "text/" + "x".repeat(250))).doesNotThrowAnyException();
    }

    // ---------------------------------------------------------------- missing things

    @Test
    void should_return_nothing_when_the_name_has_no_versions() {
        assertThat(service.load("missing")).isEmpty();
        assertThat(service.versions("missing")).isEmpty();
        assertThatThrownBy(() -> service.load(ArtifactRef.latest("missing")))
                .isInstanceOf(ArtifactNotFoundException.class).hasMessageContaining("'missing'");
    }

    @Test
    void should_list_existing_versions_when_loading_a_missing_version() {
        for (int i = 0; i < 3; i++) {
            service.save("r.md", utf8("v" + i), "text/markdown");
        }

        assertThatThrownBy(() -> service.load("r.md", 7))
                .isInstanceOf(ArtifactNotFoundException.class)
                .hasMessage("artifact 'r.md' has no version 7; existing versions: 1-3 (latest 3)");
        assertThatThrownBy(() -> service.load(ArtifactRef.parse("artifact://r.md@4")))
                .isInstanceOf(ArtifactNotFoundException.class).hasMessageContaining("1-3");
        assertThatThrownBy(() -> service.load("r.md", 0))
                .isInstanceOf(ArtifactNotFoundException.class).hasMessageContaining("no version 0");
        assertThatThrownBy(() -> service.load("r.md", -1))
                .isInstanceOf(ArtifactNotFoundException.class).hasMessageContaining("no version -1");
    }

    @Test
    void should_say_the_artifact_does_not_exist_when_loading_a_version_of_an_unknown_name() {
        assertThatThrownBy(() -> service.load("ghost", 1))
                .isInstanceOf(ArtifactNotFoundException.class)
                .hasMessage("artifact 'ghost' has no version 1; it does not exist (no versions)");
    }

    // ---------------------------------------------------------------- delete

    @Test
    void should_remove_every_version_when_deleting_a_name() {
        service.save("reports", utf8("parent"), "text/plain");
        service.save("reports/q1.md", utf8("a"), "text/markdown");
        service.save("reports/q1.md", utf8("b"), "text/markdown");
        service.save("reports/q2.md", utf8("c"), "text/markdown");

        service.delete("reports/q1.md");

        assertThat(service.versions("reports/q1.md")).isEmpty();
        assertThat(service.load("reports/q1.md")).isEmpty();
        assertThatThrownBy(() -> service.load("reports/q1.md", 1)).isInstanceOf(ArtifactNotFoundException.class);
        // positive control: neighbours, parent and sibling, are untouched
        assertThat(service.names()).containsExactly("reports", "reports/q2.md");
        assertThat(service.load("reports", 1).content()).isEqualTo(utf8("parent"));
        assertThat(service.load("reports/q2.md", 1).content()).isEqualTo(utf8("c"));
    }

    @Test
    void should_keep_nested_names_when_deleting_their_parent_name() {
        service.save("reports", utf8("parent"), "text/plain");
        service.save("reports/q1.md", utf8("child"), "text/markdown");

        service.delete("reports");

        assertThat(service.names()).containsExactly("reports/q1.md");
        assertThat(service.load("reports/q1.md", 1).content()).isEqualTo(utf8("child"));
    }

    @Test
    void should_do_nothing_when_deleting_a_missing_name() {
        service.save("kept", utf8("x"), null);

        assertThatCode(() -> service.delete("never/saved")).doesNotThrowAnyException();
        assertThat(service.names()).containsExactly("kept");
    }

    @Test
    void should_start_again_at_version_1_when_saving_after_a_delete() {
        service.save("again", utf8("1"), null);
        service.save("again", utf8("2"), null);
        service.delete("again");

        ArtifactRef ref = service.save("again", utf8("fresh"), null);

        assertThat(ref.version()).isEqualTo(1);
        assertThat(service.versions("again")).containsExactly(1);
        assertThat(service.load("again", 1).content()).isEqualTo(utf8("fresh"));
    }

    // ---------------------------------------------------------------- names

    @Test
    void should_list_sorted_names_including_nested_ones() {
        service.save("z.txt", utf8("z"), null);
        service.save("reports/q1.md", utf8("q1"), null);
        service.save("reports", utf8("r"), null);
        service.save("a/b/c/d.json", utf8("{}"), "application/json");
        service.save("reports/q1.md", utf8("q1 again"), null);

        assertThat(service.names()).containsExactly("a/b/c/d.json", "reports", "reports/q1.md", "z.txt");
    }

    @Test
    void should_list_no_names_when_empty() {
        assertThat(service.names()).isEmpty();
    }

    // ---------------------------------------------------------------- name rules

    /** Bad names, and the fragment of each that the refusal must quote. */
    protected static Stream<Arguments> badNames() {
        return Stream.of(
                Arguments.of("../x", "'../x'"),
                Arguments.of("a/../../x", "'a/../../x'"),
                Arguments.of("..", "'..'"),
                Arguments.of("/abs", "'/abs'"),
                Arguments.of("/etc/passwd", "'/etc/passwd'"),
                Arguments.of("a//b", "'a//b'"),
                Arguments.of("a/./b", "'a/./b'"),
                Arguments.of(".", "'.'"),
                Arguments.of("a/", "'a/'"),
                Arguments.of("", "''"),
                Arguments.of("a".repeat(256), "'" + "a".repeat(80) + "...'"),
                Arguments.of("a\u0000b", "'a\\u0000b'"),
                Arguments.of("a\\b", "'a\\u005cb'"),
                Arguments.of("..\\x", "'..\\u005cx'"),
                Arguments.of("C:x", "'C:x'"),
                Arguments.of("a b", "'a b'"),
                Arguments.of("new\nline", "'new\\u000aline'"),
                Arguments.of("caf\u00e9", "'caf\\u00e9'"),
                Arguments.of("x@3", "'x@3'"),
                Arguments.of("~/x", "'~/x'"));
    }

    /** Every operation that takes a name. */
    protected static List<Map.Entry<String, Consumer<ArtifactService>>> operations(String name) {
        return List.of(
                Map.entry("save", s -> s.save(name, new byte[] {1}, "text/plain")),
                Map.entry("load", s -> s.load(name)),
                Map.entry("loadVersion", s -> s.load(name, 1)),
                Map.entry("versions", s -> s.versions(name)),
                Map.entry("delete", s -> s.delete(name)));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("badNames")
    void should_refuse_a_bad_name_in_every_operation(String bad, String quoted) {
        for (Map.Entry<String, Consumer<ArtifactService>> op : operations(bad)) {
            assertNameRefused(() -> op.getValue().accept(service), bad, quoted);
        }
        assertThat(service.names()).as("nothing stored").isEmpty();
    }

    @Test
    void should_refuse_a_null_name_in_every_operation() {
        for (Map.Entry<String, Consumer<ArtifactService>> op : operations(null)) {
            assertThatThrownBy(() -> op.getValue().accept(service)).as(op.getKey())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("null");
        }
    }

    /** Asserts the refusal of {@code bad}; the message must quote the name as {@code quoted}. */
    protected void assertNameRefused(ThrowingCallable call, String bad, String quoted) {
        assertThatThrownBy(call).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("artifact name " + quoted + " is invalid");
    }

    @ParameterizedTest
    @ValueSource(strings = {"a", "report.md", "reports/q1.md", "a-b_c.d/E-F_9", "..a", "a..", ".hidden/...x",
            "x/y/z/w/v", "-rf", "v1.bin", "x/v1.json"})
    void should_accept_a_safe_name_and_round_trip_it(String name) {
        ArtifactRef ref = service.save(name, utf8(name), "text/plain");

        assertThat(ref).isEqualTo(new ArtifactRef(name, 1));
        assertThat(service.load(ArtifactRef.parse(ref.toString())).content()).isEqualTo(utf8(name));
        assertThat(service.names()).containsExactly(name);
    }

    @Test
    void should_accept_a_name_of_exactly_255_characters() {
        String name = "d".repeat(100) + "/" + "e".repeat(100) + "/" + "f".repeat(53);
        assertThat(name).hasSize(255);

        service.save(name, utf8("long"), null);

        assertThat(service.load(name, 1).content()).isEqualTo(utf8("long"));
        assertThat(service.names()).containsExactly(name);
    }

    // ---------------------------------------------------------------- concurrency

    @Test
    void should_give_400_distinct_versions_when_8_threads_save_one_name_50_times_each() throws Exception {
        int threads = 8;
        int perThread = 50;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<Map<Integer, String>>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                Callable<Map<Integer, String>> saver = () -> {
                    start.await();
                    Map<Integer, String> mine = new HashMap<>();
                    for (int i = 0; i < perThread; i++) {
                        String body = "t" + thread + "-" + i;
                        mine.put(service.save("shared.log", utf8(body), "text/plain").version(), body);
                    }
                    return mine;
                };
                futures.add(pool.submit(saver));
            }
            start.countDown();

            Map<Integer, String> all = new HashMap<>();
            for (Future<Map<Integer, String>> f : futures) {
                Map<Integer, String> mine = f.get(120, TimeUnit.SECONDS); // a bound against hangs, not a timing assert
                mine.forEach((v, body) -> assertThat(all.put(v, body)).as("version %s given twice", v).isNull());
            }

            List<Integer> expected = IntStream.rangeClosed(1, threads * perThread).boxed().toList();
            assertThat(all.keySet()).containsExactlyInAnyOrderElementsOf(expected);
            assertThat(service.versions("shared.log")).containsExactlyElementsOf(expected);
            all.forEach((v, body) -> assertThat(service.load("shared.log", v).content())
                    .as("version %s", v).isEqualTo(utf8(body)));
        } finally {
            pool.shutdownNow();
        }
    }
}
