package dev.codeexec.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** The one name sanitiser: each variant's guarantees, and injectivity where tenants are separated by it. */
class SafeNamesTest {

    @ParameterizedTest(name = "[{index}] {0} -> {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
            "../../etc/passwd | passwd",
            "C:\\Users\\me\\My Report (1).PDF | My_Report__1_.PDF",
            ".. | upload",
            ".bashrc | bashrc",
            "\"\" | upload",
            "a/b/ | upload",
            "日本語.txt | ___.txt",
            "😀.png | _.png",
            "x\u0000y | x_y",
            "-rf | -rf"})
    void should_keep_one_safe_file_name_when_sanitising_an_upload_name(String raw, String expected) {
        assertThat(SafeNames.fileName(raw, "upload", 100)).isEqualTo(expected);
    }

    @Test
    void should_cut_long_file_names_keeping_the_extension() {
        String name = SafeNames.fileName("a".repeat(300) + ".csv", "upload", 100);

        assertThat(name).hasSize(100).endsWith(".csv").startsWith("aaa");
        assertThat(SafeNames.fileName(null, "upload", 100)).isEqualTo("upload");
        assertThatThrownBy(() -> SafeNames.fileName("x", "upload", 3)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxLength (3)");
    }

    @Test
    void should_keep_separators_and_replace_the_rest_when_sanitising_a_path() {
        assertThat(SafeNames.path("out/q1 report.md")).isEqualTo("out/q1_report.md");
        assertThat(SafeNames.path("out/a\\b:c.txt")).isEqualTo("out/a_b_c.txt");
        assertThat(SafeNames.path("out/sub-dir/file_1.tar.gz")).isEqualTo("out/sub-dir/file_1.tar.gz");
    }

    @Test
    void should_give_a_dotless_bounded_label_or_the_fallback() {
        assertThat(SafeNames.label("conv.1/../x", "ws", 40)).isEqualTo("conv_1____x");
        assertThat(SafeNames.label("x".repeat(100), "ws", 40)).hasSize(40);
        assertThat(SafeNames.label("  ", "ws", 40)).isEqualTo("ws");
        assertThat(SafeNames.label(null, "ws", 40)).isEqualTo("ws");
    }

    @Test
    void should_keep_safe_lower_case_keys_unchanged_as_a_segment() {
        String uuid = UUID.randomUUID().toString();

        assertThat(SafeNames.uniqueSegment("alice")).isEqualTo("alice");
        assertThat(SafeNames.uniqueSegment(uuid)).isEqualTo(uuid);
        assertThat(SafeNames.uniqueSegment("42")).isEqualTo("42");
        assertThat(SafeNames.uniqueSegment("a.b-c_d")).isEqualTo("a.b-c_d");
    }

    @Test
    void should_add_a_hash_when_sanitising_changed_the_key() {
        assertThat(SafeNames.uniqueSegment("Alice")).matches("alice__[0-9a-f]{24}");
        assertThat(SafeNames.uniqueSegment("../bob")).matches("___bob__[0-9a-f]{24}");
        assertThat(SafeNames.uniqueSegment("..")).matches("__+[0-9a-f]{24}");
        assertThat(SafeNames.uniqueSegment("")).matches("__[0-9a-f]{24}");
        assertThat(SafeNames.uniqueSegment("a.")).as("trailing dot").matches("a___[0-9a-f]{24}");
        assertThat(SafeNames.uniqueSegment("x".repeat(65))).matches("x{40}__[0-9a-f]{24}");
        assertThat(SafeNames.uniqueSegment("a__b")).as("the marker itself").matches("a__b__[0-9a-f]{24}");
        assertThatThrownBy(() -> SafeNames.uniqueSegment(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void should_never_map_two_keys_to_one_segment_when_they_differ_only_in_unsafe_characters_or_case() {
        // The attack: a user picks a conversation id that sanitises to another user's.
        assertThat(SafeNames.uniqueSegment("a b")).isNotEqualTo(SafeNames.uniqueSegment("a_b"))
                .isNotEqualTo(SafeNames.uniqueSegment("a/b"));
        assertThat(SafeNames.uniqueSegment("Alice")).isNotEqualTo(SafeNames.uniqueSegment("alice"))
                .isNotEqualTo(SafeNames.uniqueSegment("ALICE"));
        String hashedAlice = SafeNames.uniqueSegment("Alice");
        assertThat(SafeNames.uniqueSegment(hashedAlice)).as("a key spelled like a hashed segment")
                .isNotEqualTo(hashedAlice);
        // positive control: the readable variant does merge them, which is why it is not used for tenants
        assertThat(SafeNames.label("a b", "x", 40)).isEqualTo(SafeNames.label("a_b", "x", 40));
    }

    @Test
    void should_give_distinct_valid_segments_for_many_random_keys() {
        Random random = new Random(42);
        String alphabet = "aA_.-/ \\é😀0";
        Map<String, String> seen = new HashMap<>();
        for (int i = 0; i < 20_000; i++) {
            StringBuilder key = new StringBuilder();
            int len = random.nextInt(8);
            for (int k = 0; k < len; k++) {
                key.appendCodePoint(alphabet.codePointAt(alphabet.offsetByCodePoints(0,
                        random.nextInt(alphabet.codePointCount(0, alphabet.length())))));
            }
            String segment = SafeNames.uniqueSegment(key.toString());
            assertThat(segment).matches("[a-z0-9._-]{1,66}").isNotIn(".", "..").doesNotStartWith(".")
                    .doesNotEndWith(".");
            String before = seen.putIfAbsent(segment, key.toString());
            assertThat(before == null || before.equals(key.toString()))
                    .as("'%s' and '%s' both give '%s'", before, key, segment).isTrue();
        }
    }

    @org.junit.jupiter.api.Test
    void should_keep_keys_apart_when_they_differ_only_in_unpaired_surrogates() {
        java.util.Set<String> segments = java.util.Set.of(SafeNames.uniqueSegment("team-7:chat?"),
                SafeNames.uniqueSegment("team-7:chat\uD800"), SafeNames.uniqueSegment("team-7:chat\uDFFF"));
        org.assertj.core.api.Assertions.assertThat(segments).hasSize(3);
    }
}
