package dev.codeexec.benchmarks.artifact;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.artifact.FileSystemArtifactService;
import dev.codeexec.benchmarks.Stats;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.EnumSet;
import java.util.Random;

/**
 * {@link FileSystemArtifactService} as a name's version count grows, against raw baselines in the same run and the
 * same directory tree.
 * <ol>
 *   <li>{@code save(name, 4 KiB)} of a name that already has 1, 1,000 or 5,000 versions, against a raw write of the
 *       same bytes to a temporary file, {@code force}, and an atomic rename into place (what any durable write
 *       does; the store adds metadata, a checksum and the claim of a number).</li>
 *   <li>{@code load(name)} (the latest version) against a raw read of a file of the same size.</li>
 * </ol>
 * Each timed save adds a version, so a case starts at its count and ends that many saves above it. Usage:
 * {@code ArtifactStoreBenchmark [iterations [directory]]}; the directory (default: the system's temporary directory)
 * should be on the file system the store will use, since the cost of {@code force} is most of a save.
 */
public final class ArtifactStoreBenchmark {

    private static final int[] VERSION_COUNTS = {1, 1_000, 5_000};
    private static final int CONTENT_BYTES = 4096;

    private ArtifactStoreBenchmark() {
    }

    public static void main(String[] args) throws IOException {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        Path base = args.length > 1
                ? Files.createTempDirectory(Files.createDirectories(Path.of(args[1])), "artifact-bench")
                : Files.createTempDirectory("artifact-bench");
        byte[] content = new byte[CONTENT_BYTES];
        new Random(42).nextBytes(content);
        System.out.printf("file store: %s; content %d bytes; %d timed samples per contender%n",
                Files.getFileStore(base).type(), CONTENT_BYTES, iterations);
        try {
            warmUp(base.resolve("warm-up"), content);
            for (int count : VERSION_COUNTS) {
                measure(base.resolve("n" + count), count, iterations, content);
            }
        } finally {
            deleteTree(base);
        }
    }

    private static void measure(Path dir, int count, int iterations, byte[] content) throws IOException {
        ArtifactService store = FileSystemArtifactService.at(dir.resolve("store"));
        Path raw = Files.createDirectories(dir.resolve("raw"));
        long t = System.nanoTime();
        for (int i = 0; i < count; i++) {
            store.save("bench/report.bin", content, "application/octet-stream");
        }
        System.out.printf("%n%,d versions (filled in %.1f s)%n", count, (System.nanoTime() - t) / 1e9);
        Path rawRead = raw.resolve("read.bin");
        rawWrite(raw, rawRead, content);
        for (int i = 0; i < 20; i++) { // warm-up, not kept
            store.load("bench/report.bin").orElseThrow();
            Files.readAllBytes(rawRead);
        }

        long[] save = new long[iterations];
        long[] rawSave = new long[iterations];
        long[] load = new long[iterations];
        long[] rawLoad = new long[iterations];
        for (int i = 0; i < iterations; i++) {
            long t0 = System.nanoTime();
            int version = store.save("bench/report.bin", content, "application/octet-stream").version();
            long t1 = System.nanoTime();
            rawWrite(raw, raw.resolve("v" + i + ".bin"), content);
            long t2 = System.nanoTime();
            byte[] latest = store.load("bench/report.bin").orElseThrow().content();
            long t3 = System.nanoTime();
            byte[] plain = Files.readAllBytes(rawRead);
            long t4 = System.nanoTime();
            if (version != count + i + 1 || latest.length != content.length || plain.length != content.length) {
                throw new IllegalStateException("unexpected result: version " + version + " at sample " + i);
            }
            save[i] = t1 - t0;
            rawSave[i] = t2 - t1;
            load[i] = t3 - t2;
            rawLoad[i] = t4 - t3;
        }
        Stats s = new Stats(save);
        Stats rs = new Stats(rawSave);
        Stats l = new Stats(load);
        Stats rl = new Stats(rawLoad);
        System.out.println("  save(name, 4 KiB):                 " + s);
        System.out.println("  raw write + force + rename:        " + rs);
        System.out.println("  load(name), the latest:            " + l);
        System.out.println("  raw read:                          " + rl);
        System.out.printf("  ratio save / raw write:            %.2f%n", s.median() / rs.median());
        System.out.printf("  ratio load latest / raw read:      %.2f%n", l.median() / rl.median());
    }

    /** Runs every measured path a few hundred times first, so the first case is not measured on a cold JIT. */
    private static void warmUp(Path dir, byte[] content) throws IOException {
        ArtifactService store = FileSystemArtifactService.at(dir.resolve("store"));
        Path raw = Files.createDirectories(dir.resolve("raw"));
        for (int i = 0; i < 500; i++) {
            store.save("warm-up", content, "application/octet-stream");
            store.load("warm-up").orElseThrow();
            rawWrite(raw, raw.resolve("v" + i + ".bin"), content);
            Files.readAllBytes(raw.resolve("v" + i + ".bin"));
        }
    }

    /** A durable write as a careful caller does it: temp file, all bytes, force, atomic rename. */
    private static void rawWrite(Path dir, Path target, byte[] content) throws IOException {
        Path temp = dir.resolve(".tmp-" + target.getFileName());
        try (FileChannel ch = FileChannel.open(temp,
                EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE))) {
            ByteBuffer buf = ByteBuffer.wrap(content);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        }
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
    }

    private static void deleteTree(Path root) throws IOException {
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                Files.delete(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
