package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;

/**
 * The seccomp programs as files in the engine's private state directory (hidden from every sandbox), written once
 * and atomically, read-only. The launching shell opens one as descriptor 3 for bubblewrap.
 */
final class SeccompFiles {

    private SeccompFiles() {
    }

    static synchronized Path ensure(Path stateDir, NetworkMode mode) {
        byte[] program = SeccompProgram.build(mode);
        Path file = stateDir.resolve("seccomp-" + mode.id() + ".bpf");
        try {
            if (Files.isRegularFile(file) && Arrays.equals(Files.readAllBytes(file), program)) {
                return file;
            }
            Files.createDirectories(stateDir);
            Path tmp = Files.createTempFile(stateDir, ".seccomp", ".tmp");
            Files.write(tmp, program);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return file;
        } catch (IOException e) {
            throw new BackendUnavailableException("cannot write the seccomp program to the sandbox's state "
                    + "directory: " + e.getClass().getSimpleName() + ": " + e.getMessage(), e);
        }
    }
}
