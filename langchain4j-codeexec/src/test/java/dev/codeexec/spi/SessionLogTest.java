package dev.codeexec.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.ProgramPoll;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SessionLogTest {

    @Test
    void should_return_window_by_absolute_offsets_when_nothing_was_dropped() {
        SessionLog log = new SessionLog(16);
        write(log, "0123456789");

        ProgramPoll p = log.read(2, 5, true, null, false);

        assertThat(p.output()).isEqualTo("23456");
        assertThat(p.offset()).isEqualTo(2);
        assertThat(p.nextOffset()).isEqualTo(7);
        assertThat(p.droppedBytes()).isZero();
        assertThat(p.running()).isTrue();
        assertThat(log.size()).isEqualTo(10);
    }

    @Test
    void should_report_dropped_bytes_and_start_at_oldest_when_ring_wrapped() {
        SessionLog log = new SessionLog(8);
        write(log, "01234");
        write(log, "56789");
        write(log, "ab");

        ProgramPoll p = log.read(0, 100, false, 0, false);

        assertThat(p.output()).isEqualTo("456789ab");
        assertThat(p.offset()).isEqualTo(4);
        assertThat(p.nextOffset()).isEqualTo(12);
        assertThat(p.droppedBytes()).isEqualTo(4);
        assertThat(p.exitCode()).isZero();
    }

    @Test
    void should_keep_last_capacity_bytes_when_one_write_exceeds_capacity() {
        SessionLog log = new SessionLog(4);
        write(log, "abcdefghij");

        ProgramPoll p = log.read(3, 100, true, null, false);

        assertThat(p.output()).isEqualTo("ghij");
        assertThat(p.offset()).isEqualTo(6);
        assertThat(p.droppedBytes()).isEqualTo(3);
        assertThat(p.nextOffset()).isEqualTo(10);
    }

    @Test
    void should_continue_from_next_offset_when_polling_repeatedly() {
        SessionLog log = new SessionLog(6);
        StringBuilder seen = new StringBuilder();
        long next = 0;
        long dropped = 0;
        for (String chunk : new String[] {"ab", "cdef", "gh", "ijklmnop", "q"}) {
            write(log, chunk);
            ProgramPoll p = log.read(next, 3, true, null, false);
            seen.append(p.output());
            dropped += p.droppedBytes();
            next = p.nextOffset();
        }

        // Whatever was not seen was reported as dropped or is still ahead of the reader.
        assertThat(seen.length() + dropped + (log.size() - next)).isEqualTo(log.size());
        assertThat(next).isLessThanOrEqualTo(log.size());
    }

    @Test
    void should_return_empty_window_when_offset_is_at_or_past_end() {
        SessionLog log = new SessionLog(8);
        write(log, "abc");

        ProgramPoll atEnd = log.read(3, 10, true, null, false);
        ProgramPoll past = log.read(50, 10, true, null, false);
        ProgramPoll negative = log.read(-5, 2, true, null, false);
        ProgramPoll zero = log.read(0, 0, true, null, false);

        assertThat(atEnd.output()).isEmpty();
        assertThat(atEnd.nextOffset()).isEqualTo(3);
        assertThat(past.output()).isEmpty();
        assertThat(past.offset()).isEqualTo(3);
        assertThat(past.droppedBytes()).isZero();
        assertThat(negative.output()).isEqualTo("ab");
        assertThat(negative.droppedBytes()).isZero();
        assertThat(zero.output()).isEmpty();
        assertThat(zero.nextOffset()).isZero();
    }

    @Test
    void should_not_split_utf8_character_when_window_ends_inside_it() {
        SessionLog log = new SessionLog(64);
        write(log, "aé€b");

        ProgramPoll first = log.read(0, 2, true, null, false);
        ProgramPoll second = log.read(first.nextOffset(), 3, true, null, false);
        ProgramPoll third = log.read(second.nextOffset(), 10, true, null, false);

        assertThat(first.output()).isEqualTo("a");
        assertThat(first.nextOffset()).isEqualTo(1);
        assertThat(second.output()).isEqualTo("é");
        assertThat(third.output()).isEqualTo("€b");
        assertThat(first.output() + second.output() + third.output()).doesNotContain("\uFFFD");
    }

    @Test
    void should_skip_orphaned_continuation_bytes_when_ring_dropped_a_character_start() {
        SessionLog log = new SessionLog(4);
        // "x€yz" is 6 bytes: the ring keeps the last 4, which start inside €.
        write(log, "x€yz");

        ProgramPoll p = log.read(0, 10, false, 0, false);

        assertThat(p.output()).isEqualTo("yz");
        assertThat(p.offset()).isEqualTo(4);
        assertThat(p.droppedBytes()).isEqualTo(4);
    }

    private static void write(SessionLog log, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        log.write(b, 0, b.length);
    }

    @Test
    void should_start_small_and_grow_only_as_far_as_the_output_when_little_is_written() {
        SessionLog log = new SessionLog(1 << 20);
        assertThat(log.bufferBytes()).isEqualTo(SessionLog.INITIAL);

        write(log, "x".repeat(10_000));

        assertThat(log.bufferBytes()).isBetween(10_000, 4 * 10_000);
        assertThat(log.read(0, 20_000, true, null, false).output()).hasSize(10_000);
    }

    @Test
    void should_shrink_to_what_the_output_needs_when_it_ends_and_still_read_it_all() {
        SessionLog log = new SessionLog(1 << 20);
        write(log, "hello\n");
        write(log, "world\n");

        log.trimToSize();

        assertThat(log.bufferBytes()).isEqualTo(12);
        assertThat(log.read(0, 100, false, 0, false).output()).isEqualTo("hello\nworld\n");
        // A write after the trim (output that was still on its way) grows it again without losing anything.
        write(log, "!");
        assertThat(log.read(0, 100, false, 0, false).output()).isEqualTo("hello\nworld\n!");
    }

    @Test
    void should_keep_the_full_ring_when_the_output_filled_it() {
        SessionLog log = new SessionLog(64);
        write(log, "y".repeat(100));

        log.trimToSize();

        assertThat(log.bufferBytes()).isEqualTo(64);
        assertThat(log.read(0, 100, false, 0, false).droppedBytes()).isEqualTo(36);
    }

    @Test
    void should_read_what_a_plain_ring_would_when_writes_of_any_size_grow_and_wrap_it() {
        java.util.Random random = new java.util.Random(42);
        for (int capacity : new int[] {1, 7, 4096, 5000, 20_000}) {
            SessionLog log = new SessionLog(capacity);
            StringBuilder all = new StringBuilder();
            for (int i = 0; i < 200; i++) {
                int n = random.nextInt(i % 50 == 0 ? 9000 : 300);
                StringBuilder chunk = new StringBuilder();
                for (int k = 0; k < n; k++) {
                    chunk.append((char) ('a' + random.nextInt(26)));
                }
                write(log, chunk.toString());
                all.append(chunk);
                if (i % 17 == 0) {
                    log.trimToSize();
                }
                long from = Math.max(0, all.length() - capacity);
                ProgramPoll p = log.read(0, Integer.MAX_VALUE, false, 0, false);
                assertThat(p.output()).as("capacity %d, write %d", capacity, i).isEqualTo(all.substring((int) from));
                assertThat(p.droppedBytes()).isEqualTo(from);
            }
        }
    }
}
