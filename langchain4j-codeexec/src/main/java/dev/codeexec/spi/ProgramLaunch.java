package dev.codeexec.spi;

import dev.codeexec.engine.OutputListener;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One program to start through a {@link ProcessChannel}: what the backend needs to start it (argv, environment,
 * working directory) and what the core needs to run it (stdin, timeout, output cap, listener).
 *
 * @param argv           the complete argv, including any launcher or wrapper the backend puts in front
 * @param environment    the complete environment of the program; nothing is inherited from the JVM
 * @param directory      the working directory as the backend names it (a host path, a path inside a container or a
 *                       remote sandbox)
 * @param stdin          text written to standard input before it is closed; null or empty closes it at once
 * @param timeout        wall-clock limit of a run, or the whole life of a session
 * @param maxOutputBytes bytes kept per stream by a run
 * @param listener       receives output as it arrives; null for none
 */
public record ProgramLaunch(List<String> argv, Map<String, String> environment, String directory, String stdin,
                            Duration timeout, int maxOutputBytes, OutputListener listener) {

    public ProgramLaunch {
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

    /** The program's name for messages: the first element of the argv. */
    public String programName() {
        return argv.get(0);
    }
}
