package dev.codeexec.container;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.StreamType;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.StdStream;
import dev.codeexec.spi.OutputSink;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.ProgramSignal;
import dev.codeexec.spi.RemoteProcessChannel;
import dev.codeexec.spi.RunListing;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The process channel of one run in a workspace container: one Docker exec.
 *
 * <ul>
 *   <li>Start: exec create (argv, the run's user with a group id of its own) and start with stdout, stderr and stdin
 *       attached; docker-java's {@code ResultCallback<Frame>} pushes each frame into the core's sink by stream type.
 *   </li>
 *   <li>Exit: when the attach stream ended, the exec is inspected for its status.</li>
 *   <li>Stdin: framed ({@link FramedStdin}), because docker-java cannot half-close it; raw for a long-lived program
 *       that needs no end of file (the workspace's Python kernel).</li>
 *   <li>Tree kill: every process of the run carries the run's own group id, which no process can shed (all
 *       capabilities are dropped, no-new-privileges is set), daemons that called {@code setsid} included. A second
 *       exec stops, then kills, every process of that group ({@link ExecScripts#KILL_GROUP}); PID 1 reaps them.</li>
 *   <li>Signal: a second exec signals the program's pid, recorded by the wrapper, while it is still the run's.</li>
 * </ul>
 *
 * <p>Thread roles ({@link RemoteProcessChannel} holds the rules): docker-java's callback thread only copies frames
 * into the sink and completes the output future; the exit status is fetched on {@link #WAITER}, never on the callback
 * thread. A run that lost its backend after it started is reported by {@link #failure()}: a
 * {@link BackendUnavailableException} whose message says what was lost and whose cause is the transport's failure.
 */
final class ExecChannel extends RemoteProcessChannel {

    private static final Logger LOG = LoggerFactory.getLogger(ExecChannel.class);

    private static final AtomicInteger THREADS = new AtomicInteger();

    /** How long Docker may take to show a container's stop that its refused execs already show. */
    static final Duration STOP_SHOWN_WITHIN = Duration.ofSeconds(120);

    /** Pids lent to the exec that kills a run at the container's pids limit. */
    static final long KILL_HEADROOM = 16;

    /** Fetches exit statuses after the streams ended. */
    static final ExecutorService WAITER = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "codeexec-container-exit-" + THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
    });

    private final DockerConnection docker;
    private final String containerId;
    private final String user;
    private final String helperUser;
    private final long runGid;
    private final String controlDir;
    /** The folders the wrapper lists after the program, taken out of its stdout; null for none. */
    private final RunListing listing;
    /** True for framed stdin with an end of file ({@link ExecScripts#RUN}), false for raw. */
    private final boolean framedStdin;

    /**
     * @param user       the run's {@code uid:gid}, the gid being the run's own
     * @param helperUser the user of helper execs ({@code uid:gid} with a gid no run has)
     * @param runGid     the run's group id
     * @param controlDir the run's control directory (pid file, stdin FIFO), outside the workspace
     * @param listing    the wrapper's listing of folders after the program, or null
     * @param framed     true when the wrapper decodes framed stdin ({@link ExecScripts#RUN}); false when it copies
     *                   raw stdin ({@link ExecScripts#RUN_RAW_STDIN})
     */
    ExecChannel(DockerConnection docker, String containerId, String user, String helperUser, long runGid,
                String controlDir, RunListing listing, boolean framed) {
        this.docker = docker;
        this.containerId = containerId;
        this.user = user;
        this.helperUser = helperUser;
        this.runGid = runGid;
        this.controlDir = controlDir;
        this.listing = listing;
        this.framedStdin = framed;
    }

    @Override
    protected RemoteProcess open(ProgramLaunch launch, OutputSink output) {
        String execId;
        try {
            execId = docker.control().execCreateCmd(containerId).withCmd(launch.argv().toArray(String[]::new))
                    .withUser(user).withWorkingDir("/").withAttachStdin(true).withAttachStdout(true)
                    .withAttachStderr(true).withTty(false).exec().getId();
        } catch (RuntimeException e) {
            throw docker.translate(e, "start a program in the workspace's container");
        }
        ExecProcess p = new ExecProcess(execId, output,
                framedStdin ? new FramedStdin() : FramedStdin.raw());
        try {
            docker.streams().execStartCmd(execId).withDetach(false).withTty(false).withStdIn(p.stdin.input())
                    .exec(p.callback);
        } catch (RuntimeException e) {
            p.stdin.kill();
            throw docker.translate(e, "start a program in the workspace's container");
        }
        return p;
    }

    private final class ExecProcess extends RemoteProcess {
        final FramedStdin stdin;
        final Instant startedAt = Instant.now();
        final String execId;
        final ResultCallback.Adapter<Frame> callback;
        final OutputSink output;

        ExecProcess(String execId, OutputSink output, FramedStdin stdin) {
            super(stdin);
            this.stdin = stdin;
            this.execId = execId;
            this.output = output;
            OutputSink sink = listing == null ? output : listing.filter(output);
            this.callback = new ResultCallback.Adapter<>() {
                @Override
                public void onNext(Frame f) {
                    byte[] b = f.getPayload();
                    if (b != null && b.length > 0) {
                        sink.write(f.getStreamType() == StreamType.STDERR ? StdStream.STDERR : StdStream.STDOUT, b,
                                0, b.length);
                    }
                }

                @Override
                public void onError(Throwable t) {
                    // Not the template's onError: it logs an ERROR with a stack trace for what is, after a kill or
                    // an end of the run, an expected close. A break while the program runs is reported by check().
                    if (!killed()) {
                        lose("the stream from the Docker engine broke", t);
                    }
                    LOG.debug("exec stream of a run ended with {}", t.toString());
                    ended();
                    Execs.closeQuietly(this);
                }

                @Override
                public void onComplete() {
                    ended();
                    super.onComplete();
                }
            };
        }

        /** Notes that the run lost its backend after it started: the first reason wins. */
        private void lose(String why, Throwable cause) {
            lose(new BackendUnavailableException(why, cause));
        }

        private void ended() {
            stdin.kill();
            if (listing != null) {
                listing.streamEnded(output); // what is not the wrapper's listing is the program's output
            }
            if (outputEnded()) {
                WAITER.execute(this::finish);
            }
        }

        /**
         * Fetches the exit status once the output ended, and tells a run that ended from one that lost its backend:
         * the wrapper holds the exec's output open until it exits, so an exec still running after its stream ended
         * means the stream broke; an exec killed by a signal in a container that stopped (or started again) meanwhile
         * was ended by the container's stop, not by itself.
         */
        private void finish() {
            Integer code = null;
            try {
                code = Execs.exitCodeOrNull(docker, execId);
            } catch (RuntimeException e) {
                if (!killed()) {
                    lose("the Docker engine stopped answering during the run", e);
                }
            }
            if (lost() == null && !killed() && (code == null || code >= 128) && containerStopped()) {
                lose("the workspace's container stopped during the run", null);
            }
            if (lost() == null && !killed() && code == null) {
                lose("the stream from the Docker engine ended while the program was still running", null);
            }
            if (lost() != null) {
                // Nothing may keep running unseen: the run is over for its caller.
                try {
                    killGroup();
                } catch (RuntimeException e) {
                    LOG.debug("could not kill the processes of a run that lost its stream: {}", e.getMessage());
                }
            }
            exited(code == null ? -1 : code);
        }

        /**
         * Kills every process of the run's group. A run that forked up to the container's pids limit leaves no pid
         * for the exec that kills it (the OCI runtime cannot start it): then the limit is raised by
         * {@link #KILL_HEADROOM} for the kill and set back after it.
         */
        private void killGroup() {
            List<String> kill = List.of("sh", "-c", ExecScripts.KILL_GROUP, "sh", Long.toString(runGid));
            if (Execs.run(docker, containerId, helperUser, kill).ok()) {
                return;
            }
            Long pids;
            try {
                pids = docker.control().inspectContainerCmd(containerId).exec().getHostConfig().getPidsLimit();
            } catch (RuntimeException e) {
                throw docker.translate(e, "read the container's process limit");
            }
            if (pids == null || pids <= 0) {
                return;
            }
            try {
                docker.control().updateContainerCmd(containerId).withPidsLimit(pids + KILL_HEADROOM).exec();
                Execs.run(docker, containerId, helperUser, kill);
            } catch (RuntimeException e) {
                throw docker.translate(e, "kill a run at the container's process limit");
            } finally {
                try {
                    docker.control().updateContainerCmd(containerId).withPidsLimit(pids).exec();
                } catch (RuntimeException e) {
                    LOG.warn("could not set a container's process limit back to {}: {}", pids, e.getMessage());
                }
            }
        }

        /**
         * Whether the container stopped (or was started again) after this run started, as Docker confirms it.
         *
         * <p>Docker may show a container as running for a while after its PID 1 died: an exec's end is reported
         * before the container's, later the more loaded the host is. Meanwhile no exec can start in it. So a
         * container shown as running must start a trivial exec: if one starts, it is running; if Docker refuses
         * (the exec cannot be created or started), the state is read again until Docker shows the stop, within
         * {@link #STOP_SHOWN_WITHIN} (a liveness bound for a wedged engine, generous for a loaded host). A container
         * that still shows as running then was not stopped: the refusal had another cause (a full process table, for
         * one) and the program's own exit status stands. When the engine does not answer, nothing is concluded here.
         */
        private boolean containerStopped() {
            long end = System.nanoTime() + STOP_SHOWN_WITHIN.toNanos();
            long pause = 10;
            while (true) {
                Boolean shown = stateShowsStopped();
                if (shown == null || shown) {
                    return Boolean.TRUE.equals(shown);
                }
                try {
                    if (Execs.run(docker, containerId, helperUser, List.of("true")).ok()) {
                        return false;
                    }
                } catch (BackendUnavailableException e) {
                    return false;
                } catch (RuntimeException e) {
                    LOG.debug("a trivial exec did not start in a container shown as running: {}", e.getMessage());
                }
                if (System.nanoTime() > end) {
                    return false;
                }
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
                pause = Math.min(pause * 2, 200);
            }
        }

        /**
         * True when Docker shows the container gone, not running, or started after this run started; false when it
         * shows it running since before; null when the engine did not answer.
         */
        private Boolean stateShowsStopped() {
            try {
                InspectContainerResponse.ContainerState st = docker.control().inspectContainerCmd(containerId).exec()
                        .getState();
                return st == null || !Boolean.TRUE.equals(st.getRunning())
                        || st.getStartedAt() != null && Instant.parse(st.getStartedAt()).isAfter(startedAt);
            } catch (NotFoundException e) {
                return true;
            } catch (RuntimeException e) {
                return null;
            }
        }

        @Override
        protected void sendSignal(ProgramSignal signal) {
            String sig = signal == ProgramSignal.INTERRUPT ? "INT" : "TERM";
            Execs.run(docker, containerId, helperUser,
                    List.of("sh", "-c", ExecScripts.SIGNAL, "sh", controlDir, Long.toString(runGid), sig));
        }

        @Override
        protected void killRemoteTree() {
            killGroup();
        }

        @Override
        protected void closeStream() {
            Execs.closeQuietly(callback);
            ended();
        }
    }
}
