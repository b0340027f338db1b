package dev.codeexec.spi.host;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.StdStream;
import dev.codeexec.spi.IoThreads;
import dev.codeexec.spi.ChannelProcess;
import dev.codeexec.spi.OutputSink;
import dev.codeexec.spi.ProcessChannel;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.ProgramSignal;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The process channel of the host backends (local, sandbox): a {@link java.lang.Process} whose two output streams
 * are pumped into the core's sink by I/O threads. Host-family SPI (see the package).
 *
 * <p>Kills go through the one {@code ProcessTreeKiller}. A <em>wrapped</em> launch is one whose {@code argv[0]} is
 * a launcher whose descendants are the program (a PID-namespace wrapper, bubblewrap): a signal then goes to the
 * descendants only, since signalling the launcher would end the whole namespace at once, without grace.
 */
public final class HostProcessChannel implements ProcessChannel {

    private static final HostProcessChannel DIRECT = new HostProcessChannel(false, null, null);
    private static final HostProcessChannel WRAPPED = new HostProcessChannel(true, null, null);

    private final boolean wrapped;
    private final LauncherThreads starter;
    private final Cgroups.RunGroup group;

    private HostProcessChannel(boolean wrapped, LauncherThreads starter, Cgroups.RunGroup group) {
        this.wrapped = wrapped;
        this.starter = starter;
        this.group = group;
    }

    /** Launches whose argv starts with the program itself. */
    public static HostProcessChannel direct() {
        return DIRECT;
    }

    /** Launches whose {@code argv[0]} is a launcher whose descendants are the program. */
    public static HostProcessChannel wrapped() {
        return WRAPPED;
    }

    /** {@link #wrapped()} when {@code wrapped}, else {@link #direct()}. */
    public static HostProcessChannel of(boolean wrapped) {
        return wrapped ? WRAPPED : DIRECT;
    }

    /**
     * The same channel, forking from {@code starter}'s threads instead of the caller's. A launcher that asks the
     * kernel to kill it when its parent goes ({@code PR_SET_PDEATHSIG}: {@code setpriv --pdeathsig}, bubblewrap's
     * {@code --die-with-parent}) watches the <em>thread</em> that forked it: such launches must be forked from
     * threads that live as long as the processes they start ({@link LauncherThreads}), never from a caller's thread
     * that may end first.
     */
    public HostProcessChannel startingOn(LauncherThreads starter) {
        return new HostProcessChannel(wrapped, starter, group);
    }

    /**
     * The same channel, forking each launch directly in {@code group} ({@link Cgroups.RunGroup#spawn}: the forking
     * thread joins the groups, forks, and goes back), for a group that {@linkplain Cgroups.RunGroup#spawnsFromThread()
     * allows it}; the launch then needs no launching shell.
     */
    public HostProcessChannel spawningIn(Cgroups.RunGroup group) {
        return new HostProcessChannel(wrapped, starter, group);
    }

    @Override
    public ChannelProcess start(ProgramLaunch launch, OutputSink output) {
        Process p = starter == null ? forkIn(group, launch) : starter.fork(() -> forkIn(group, launch));
        return new HostProcess(p, wrapped, output);
    }

    private static Process forkIn(Cgroups.RunGroup group, ProgramLaunch launch) {
        return group == null ? fork(launch) : group.spawn(() -> fork(launch));
    }

    private static Process fork(ProgramLaunch launch) {
        ProcessBuilder pb = new ProcessBuilder(launch.argv()).directory(new File(launch.directory()));
        pb.environment().clear();
        pb.environment().putAll(launch.environment());
        try {
            return pb.start();
        } catch (IOException e) {
            // The JDK's message names the working directory, a host path that must not reach a model.
            String reason = String.valueOf(e.getMessage()).replaceAll(" \\(in directory \"[^\"]*\"\\)", "");
            throw new BackendUnavailableException("cannot start '" + launch.programName() + "': " + reason, e);
        }
    }

    /** A started host process. */
    private static final class HostProcess implements ChannelProcess {
        private final Process process;
        private final boolean wrapped;
        private final CompletableFuture<Integer> exit;
        private final CompletableFuture<Void> outputEnd;

        HostProcess(Process process, boolean wrapped, OutputSink output) {
            this.process = process;
            this.wrapped = wrapped;
            this.outputEnd = CompletableFuture.allOf(
                    pump(process.getInputStream(), StdStream.STDOUT, output),
                    pump(process.getErrorStream(), StdStream.STDERR, output));
            this.exit = new ExitFuture(process);
        }

        private static CompletableFuture<Void> pump(InputStream in, StdStream stream, OutputSink output) {
            return CompletableFuture.runAsync(() -> {
                byte[] buf = new byte[8192];
                try (in) {
                    int n;
                    while ((n = in.read(buf)) > 0) {
                        output.write(stream, buf, 0, n);
                    }
                } catch (IOException e) {
                    // The stream was closed after a kill: what was read is kept.
                }
            }, IoThreads.IO);
        }

        /**
         * The exit code. A caller that waits for it ({@code get}, {@code join}) waits on the process itself and is
         * woken by the JDK's reaper thread directly; dependent actions still run when the process ends, through
         * {@link Process#onExit()} (which first hands over to another pool).
         */
        private static final class ExitFuture extends CompletableFuture<Integer> {
            private final Process process;

            ExitFuture(Process process) {
                this.process = process;
                process.onExit().whenComplete((p, t) -> complete(process.exitValue()));
            }

            @Override
            public Integer get() throws InterruptedException, ExecutionException {
                if (!isDone()) {
                    complete(process.waitFor());
                }
                return super.get();
            }

            @Override
            public Integer get(long timeout, TimeUnit unit)
                    throws InterruptedException, ExecutionException, TimeoutException {
                if (!isDone()) {
                    if (!process.waitFor(timeout, unit)) {
                        throw new TimeoutException();
                    }
                    complete(process.exitValue());
                }
                return super.get(timeout, unit);
            }

            @Override
            public Integer join() {
                if (!isDone()) {
                    boolean interrupted = false;
                    while (true) {
                        try {
                            complete(process.waitFor());
                            break;
                        } catch (InterruptedException e) {
                            interrupted = true;
                        }
                    }
                    if (interrupted) {
                        Thread.currentThread().interrupt();
                    }
                }
                return super.join();
            }
        }

        @Override
        public OutputStream stdin() {
            return process.getOutputStream();
        }

        @Override
        public CompletableFuture<Integer> exit() {
            return exit;
        }

        @Override
        public CompletableFuture<Void> outputEnd() {
            return outputEnd;
        }

        @Override
        public void signal(ProgramSignal signal) {
            if (process.isAlive()) {
                ProcessTreeKiller.signal(process, signal, wrapped);
            }
        }

        @Override
        public void killTree() {
            ProcessTreeKiller.kill(process);
        }
    }
}
