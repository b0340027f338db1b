package dev.codeexec.benchmarks.snapshot;

import dev.codeexec.artifact.FileSystemArtifactService;
import dev.codeexec.benchmarks.Stats;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.workspace.snapshot.RestoreReceipt;
import dev.codeexec.workspace.snapshot.SnapshotOptions;
import dev.codeexec.workspace.snapshot.WorkspaceSnapshots;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Random;

/**
 * A snapshot and a restore of a workspace of 10,000 files and 100 MB (10 KiB each, random bytes) on the local engine into a {@link FileSystemArtifactService}, against {@code tar} of the same tree in the same
 * run: {@code tar -cf} of {@code work/}, {@code out/}, {@code home/} into a file on the same file system, and
 * {@code tar -xf} of it into an empty directory. Both also against the same tar followed by {@code sync}, since the
 * store forces the pack and the manifest to disk and tar does not. Each sample captures into a fresh store and
 * restores into a fresh workspace; samples alternate between the contenders.
 * Usage: {@code SnapshotBenchmark [samples [files [bytesPerFile [directory]]]]}; the directory (default: the system's
 * temporary directory) holds the workspaces, the store and the archives; on tmpfs ({@code /dev/shm}) forced writes
 * cost nothing, which leaves the snapshot's own work.
 */
public final class SnapshotBenchmark {

    private SnapshotBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int samples = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int files = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        int size = args.length > 2 ? Integer.parseInt(args[2]) : 10 * 1024;
        Path base = args.length > 3
                ? Files.createTempDirectory(Files.createDirectories(Path.of(args[3])), "snapshot-bench")
                : Files.createTempDirectory("snapshot-bench");
        try (LocalEngine engine = LocalEngine.builder().rootDir(base.resolve("engine")).build()) {
            Workspace source = engine.manager().createWorkspace("src", WorkspacePolicy.DEFAULT);
            Path root = Path.of(source.path());
            fill(root, files, size);
            System.out.printf("file store: %s; %,d files of %,d bytes (%,d MB) in work/; heap max %d MB; %d samples%n",
                    Files.getFileStore(base).type(), files, size, (long) files * size >> 20,
                    Runtime.getRuntime().maxMemory() >> 20, samples);
            SnapshotOptions options = SnapshotOptions.builder().maxFiles(files + 10).build();
            long[] capture = new long[samples];
            long[] restore = new long[samples];
            long[] tarC = new long[samples];
            long[] tarX = new long[samples];
            long[] tarCSync = new long[samples];
            long[] tarXSync = new long[samples];
            for (int i = -1; i < samples; i++) { // sample -1 warms up and is not kept
                Path store = base.resolve("store" + i);
                WorkspaceSnapshots snapshots = new WorkspaceSnapshots(FileSystemArtifactService.at(store));
                long t0 = System.nanoTime();
                snapshots.capture(engine, source, "bench", options);
                long t1 = System.nanoTime();
                Workspace target = engine.manager().createWorkspace("dst" + i, WorkspacePolicy.DEFAULT);
                long t2 = System.nanoTime();
                RestoreReceipt r = snapshots.restore(engine, target, "bench", null, options, false);
                long t3 = System.nanoTime();
                if (!r.clean() || r.filesRestored() != files) {
                    throw new IllegalStateException("restore not clean: " + r.summary());
                }
                Path tar = base.resolve("tree" + i + ".tar");
                long t4 = System.nanoTime();
                sh(root, "tar", "-cf", tar.toString(), "work", "out", "home");
                long t5 = System.nanoTime();
                Path into = Files.createDirectories(base.resolve("x" + i));
                long t6 = System.nanoTime();
                sh(into, "tar", "-xf", tar.toString());
                long t7 = System.nanoTime();
                Path tar2 = base.resolve("tree-sync" + i + ".tar");
                long t8 = System.nanoTime();
                sh(root, "sh", "-c", "tar -cf '" + tar2 + "' work out home && sync");
                long t9 = System.nanoTime();
                Path into2 = Files.createDirectories(base.resolve("xs" + i));
                long t10 = System.nanoTime();
                sh(into2, "sh", "-c", "tar -xf '" + tar2 + "' && sync");
                long t11 = System.nanoTime();
                if (i >= 0) {
                    capture[i] = t1 - t0;
                    restore[i] = t3 - t2;
                    tarC[i] = t5 - t4;
                    tarX[i] = t7 - t6;
                    tarCSync[i] = t9 - t8;
                    tarXSync[i] = t11 - t10;
                }
                engine.manager().cleanup(target);
                deleteTree(store);
                deleteTree(into);
                deleteTree(into2);
                Files.delete(tar);
                Files.delete(tar2);
            }
            report("snapshot capture", capture, "tar -cf", tarC, "tar -cf + sync", tarCSync);
            report("snapshot restore (+ receipt)", restore, "tar -xf", tarX, "tar -xf + sync", tarXSync);
        } finally {
            deleteTree(base);
        }
    }

    private static void report(String what, long[] ours, String raw, long[] rawNs, String rawSync, long[] syncNs) {
        Stats o = new Stats(ours);
        Stats r = new Stats(rawNs);
        Stats s = new Stats(syncNs);
        System.out.printf("%-30s %.0f ms (%s)%n", what, o.median() / 1000, o);
        System.out.printf("%-30s %.0f ms (%s)%n", raw, r.median() / 1000, r);
        System.out.printf("%-30s %.0f ms (%s)%n", rawSync, s.median() / 1000, s);
        System.out.printf("  ratio / %s: %.2f; / %s: %.2f%n", raw, o.median() / r.median(), rawSync,
                o.median() / s.median());
    }

    private static void fill(Path root, int files, int size) throws IOException {
        Random random = new Random(42);
        byte[] content = new byte[size];
        for (int i = 0; i < files; i++) {
            random.nextBytes(content);
            Path dir = Files.createDirectories(root.resolve("work/d" + (i / 100)));
            Files.write(dir.resolve("f" + i + ".bin"), content);
        }
    }

    private static void sh(Path dir, String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IllegalStateException(String.join(" ", cmd) + " failed");
        }
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
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
