package dev.codeexec.spi.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Volumes with real loop devices: a volume holds at most its quota for an unprivileged writer, leaves root its
 * reserve, goes away with every file on release, and the volumes of an engine that died are unmounted by the next.
 */
class QuotaVolumesIT {

    @TempDir
    Path tmp;

    @BeforeAll
    static void requireRoot() {
        Requirements.require("root".equals(System.getProperty("user.name")), "root (loop devices)");
    }

    /** Mount points at or below {@code dir} (a real path), from this process's mount table. */
    private static List<String> mountsUnder(Path dir) throws IOException {
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().map(l -> l.split(" ")[4])
                .filter(m -> m.equals(dir.toString()) || m.startsWith(dir + "/")).toList();
    }

    @Test
    void should_leave_programs_the_quota_and_root_its_reserve() throws IOException {
        try (QuotaVolumes volumes = QuotaVolumes.probe(tmp, QuotaVolumes.MIN_QUOTA, -1, false)) {
            Path v = volumes.mount("one", 8L << 20);
            try {
                long usable = Files.getFileStore(v).getUsableSpace();
                long free = Files.getFileStore(v).getUnallocatedSpace();
                assertThat(usable).as("what programs may write").isBetween(8L << 20, (8L << 20) + (64L << 10));
                assertThat(free - usable).as("the reserve").isGreaterThanOrEqualTo(QuotaVolumes.reserveFor(8L << 20));
            } finally {
                volumes.release("one");
            }
            assertThat(mountsUnder(tmp.toRealPath())).isEmpty();
            assertThat(volumes.mountPoint("one")).doesNotExist();
        }
    }

    @Test
    void should_unmount_the_volumes_of_an_engine_that_ended_without_closing() throws IOException {
        QuotaVolumes dead = QuotaVolumes.probe(tmp.resolve("dead"), QuotaVolumes.MIN_QUOTA, -1, false);
        Path v = dead.mount("ws-1", 0);
        try {
            QuotaVolumes.reapOrphans();
            assertThat(mountsUnder(v.toRealPath())).as("a live engine's volume is left alone").hasSize(1);

            dead.close(); // its lock is gone, as when its JVM died; the volume stays mounted
            QuotaVolumes.reapOrphans();

            assertThat(mountsUnder(tmp.toRealPath())).isEmpty();
        } finally {
            dead.release("ws-1");
        }
    }

    /** Whether another process can take the record lock on {@code lockFile} now (python's lockf, non-blocking). */
    private static boolean lockableByAnotherProcess(Path lockFile) throws Exception {
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", "import fcntl, sys\n"
                + "f = open(sys.argv[1], 'r+')\n"
                + "try:\n    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept OSError:\n    sys.exit(3)\n",
                lockFile.toString()).redirectErrorStream(true).start();
        assertThat(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(new String(p.getInputStream().readAllBytes())).isIn(0, 3);
        return p.exitValue() == 0;
    }

    @Test
    void should_keep_a_live_engines_lock_when_another_engine_of_this_jvm_sweeps_orphans() throws Exception {
        Requirements.require(Files.isExecutable(Path.of("/usr/bin/python3")), "/usr/bin/python3");
        QuotaVolumes live = QuotaVolumes.probe(tmp.resolve("live"), QuotaVolumes.MIN_QUOTA, -1, false);
        Path lockFile = tmp.resolve("live/volumes/.lock");
        live.mount("ws-1", 0);
        try {
            // A second engine's start sweeps orphans: closing any descriptor of a lock file would drop this JVM's lock.
            QuotaVolumes.probe(tmp.resolve("second"), QuotaVolumes.MIN_QUOTA, -1, false).close();
            QuotaVolumes.reapOrphans();

            assertThat(lockableByAnotherProcess(lockFile)).as("the live engine's lock, seen from another process")
                    .isFalse();
        } finally {
            live.release("ws-1");
            live.close();
        }
        assertThat(lockableByAnotherProcess(lockFile)).as("positive control: free once the engine closed").isTrue();
    }

    @Test
    void should_refuse_a_quota_below_the_smallest() {
        assertThatThrownBy(() -> QuotaVolumes.validate(QuotaVolumes.MIN_QUOTA - 1))
                .isInstanceOf(InvalidSpecException.class).hasMessageContaining("at least");
    }
}
