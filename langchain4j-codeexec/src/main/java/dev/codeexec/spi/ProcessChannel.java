package dev.codeexec.spi;

/**
 * How a backend starts programs: the one thing a backend must supply for runs and sessions. The core
 * ({@link ProgramRuns}) does everything else once: stdin feeding, output caps, the timeout and drain rules, the
 * streaming listener, interactive sessions and result assembly.
 *
 * <p>The contract is push-style, because that is how the backends deliver output: a host process is pumped by the
 * channel's threads, a Docker exec pushes frames from docker-java's callback thread, an E2B envd process stream
 * pushes Connect frames from the HTTP reader. The channel writes what arrives into the core's {@link OutputSink}
 * and reports the end through {@link ChannelProcess}.
 */
@FunctionalInterface
public interface ProcessChannel {

    /**
     * Starts a program. Returns once it runs (or has already ended); output starts flowing into {@code output} from
     * the backend's thread at once.
     *
     * @throws dev.codeexec.engine.BackendUnavailableException when the program cannot be started at all (the
     *                                                         launcher is missing, the backend does not answer);
     *                                                         the message names no host path
     */
    ChannelProcess start(ProgramLaunch launch, OutputSink output);
}
