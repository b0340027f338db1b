package dev.codeexec.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A program of the sandbox swaps a link in and out while the engine reads a file (the fake's sandboxes share this
 * host's file system, so a thread of the test plays the program). Every read must give the file's own bytes or a
 * refusal, never the bytes of what the link points to; some reads must give the file's bytes (the positive control:
 * a reader that refuses everything passes nothing).
 */
class E2bFileReadRaceIT {

    /**
     * Reads per case: 300 (600 in all) in the suite; {@code -Dcodeexec.e2b.raceReads=1500} gives the 3,000 reads the
     * figures in docs/e2b.md come from.
     */
    private static final int READS = Integer.getInteger("codeexec.e2b.raceReads", 300);
    private static final String MINE = "the workspace's own bytes";
    private static final String SECRET = "a file outside the workspace";

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.host("e2b-race");
    private static E2bEngine engine;
    private static Workspace ws;
    private static Path root;
    private static Path outside;

    @BeforeAll
    static void start() throws Exception {
        engine = FAKE.closing(FAKE.engine().build());
        ws = engine.manager().createWorkspace("race", WorkspacePolicy.DEFAULT);
        root = Path.of(ws.path());
        outside = FAKE.base().resolve("outside");
        Files.createDirectories(outside.resolve("dir"));
        Files.writeString(outside.resolve("secret"), SECRET);
        Files.writeString(outside.resolve("dir/f"), SECRET);
    }

    private record Tally(int own, int leaked, int refused, List<String> other) {
    }

    /**
     * Reads {@code path} {@link #READS} times while {@code swap} runs in a loop beside.
     */
    private static Tally readWhileSwapping(String path, ThrowingRunnable swap) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        CompletableFuture<Void> swapper = CompletableFuture.runAsync(() -> {
            try {
                while (!stop.get()) {
                    swap.run();
                    // The real state a while (the swap itself stays as fast as a thread can make it): without a
                    // pause no read would ever find the file still there at its end.
                    Thread.sleep(1);
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        int own = 0;
        int leaked = 0;
        int refused = 0;
        List<String> other = new ArrayList<>();
        try {
            for (int i = 0; i < READS; i++) {
                String got;
                try {
                    got = new String(engine.fs().readFile(ws, path, 0, 1000).content(), StandardCharsets.UTF_8);
                } catch (CodeExecException e) {
                    refused++;
                    continue;
                }
                if (got.equals(MINE)) {
                    own++;
                } else if (got.contains(SECRET)) {
                    leaked++;
                } else {
                    other.add(got);
                }
            }
        } finally {
            stop.set(true);
            swapper.get(60, TimeUnit.SECONDS);
        }
        System.out.println("reads of " + path + " beside a swapper: own " + own + ", leaked " + leaked + ", refused "
                + refused + ", other " + other.size());
        return new Tally(own, leaked, refused, other);
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static void replace(Path at, ThrowingRunnable make, Path tmp) throws Exception {
        make.run();
        Files.move(tmp, at, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void should_give_the_files_own_bytes_or_refuse_when_a_link_to_outside_is_swapped_in_for_the_file() throws Exception {
        Path f = root.resolve("work/f");
        Path tmpLink = root.resolve("work/.link");
        Path tmpFile = root.resolve("work/.file");
        Files.writeString(f, MINE);

        Tally t = readWhileSwapping("work/f", () -> {
            replace(f, () -> Files.createSymbolicLink(tmpLink, outside.resolve("secret")), tmpLink);
            replace(f, () -> Files.writeString(tmpFile, MINE), tmpFile);
        });

        assertThat(t.leaked()).as("reads that returned the link's target").isZero();
        assertThat(t.other()).as("reads that returned something else").isEmpty();
        assertThat(t.own()).as("reads that returned the file (positive control)").isPositive();
    }

    @Test
    void should_give_the_files_own_bytes_or_refuse_when_a_directory_is_swapped_for_a_link_to_outside()
            throws Exception {
        Path d = root.resolve("work/d");
        Path tmpLink = root.resolve("work/.dlink");
        Path real = root.resolve("work/.dreal");
        Files.createDirectories(d);
        Files.writeString(d.resolve("f"), MINE);

        Tally t = readWhileSwapping("work/d/f", () -> {
            // The real directory moves aside and a link to the outside takes its name, then it comes back.
            Files.move(d, real, StandardCopyOption.ATOMIC_MOVE);
            Files.createSymbolicLink(tmpLink, outside.resolve("dir"));
            Files.move(tmpLink, d, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            Files.delete(d);
            Files.move(real, d, StandardCopyOption.ATOMIC_MOVE);
        });

        assertThat(t.leaked()).as("reads that returned the link's target").isZero();
        assertThat(t.other()).as("reads that returned something else").isEmpty();
        assertThat(t.own()).as("reads that returned the file (positive control)").isPositive();
    }
}
