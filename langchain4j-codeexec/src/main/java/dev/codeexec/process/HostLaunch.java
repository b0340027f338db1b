package dev.codeexec.process;

import dev.codeexec.engine.OutputListener;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A host process to launch: the complete argv (including any isolating wrapper) and the complete environment.
 * Nothing is inherited from the JVM's environment.
 *
 * @param argv           program and arguments; the first element is the wrapper or program to execute
 * @param environment    the complete environment of the process
 * @param directory      the working directory
 * @param stdin          text written to standard input before it is closed; null closes it at once
 * @param timeout        wall-clock limit
 * @param maxOutputBytes bytes kept per stream
 * @param listener       receives output as it arrives; null for none
 * @param wrapped        true when {@code argv[0]} is a launcher whose descendants are the program (a PID-namespace
 *                       wrapper, bubblewrap): a graceful stop then signals only the descendants, because signalling
 *                       the launcher would end the whole namespace at once, without grace
 */
public record HostLaunch(List<String> argv, Map<String, String> environment, Path directory, String stdin,
                         Duration timeout, int maxOutputBytes, OutputListener listener, boolean wrapped) {

    /** A launch of the program itself, without a wrapper. */
    public HostLaunch(List<String> argv, Map<String, String> environment, Path directory, String stdin,
                      Duration timeout, int maxOutputBytes, OutputListener listener) {
        this(argv, environment, directory, stdin, timeout, maxOutputBytes, listener, false);
    }

    public HostLaunch {
        argv = List.copyOf(argv);
        if (argv.isEmpty()) {
            throw new IllegalArgumentException("argv must not be empty");
        }
        environment = Map.copyOf(environment);
        Objects.requireNonNull(directory, "directory");
        Objects.requireNonNull(timeout, "timeout");
        if (maxOutputBytes <= 0) {
            throw new IllegalArgumentException("maxOutputBytes (" + maxOutputBytes + ") must be positive");
        }
    }
}
