package dev.codeexec.container;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.StreamType;
import dev.codeexec.engine.StdStream;
import dev.codeexec.spi.ChannelProcess;
import dev.codeexec.spi.OutputSink;
import dev.codeexec.spi.ProcessChannel;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.ProgramSignal;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
 *   <li>Stdin: framed ({@link FramedStdin}), because docker-java cannot half-close it.</li>
 *   <li>Tree kill: every process of the run carries the run's own group id, which no process can shed (all
 *       capabilities are dropped, no-new-privileges is set), daemons that called {@code setsid} included. A second
 *       exec stops, then kills, every process of that group ({@link ExecScripts#KILL_GROUP}); PID 1 reaps them.</li>
 *   <li>Signal: a second exec signals the program's pid, recorded by the wrapper, while it is still the run's.</li>
 * </ul>
 *
 * <p>Thread roles: docker-java's callback thread only copies frames into the sink and completes the output future;
 * the exit status is fetched on {@link #WAITER}, never on the callback thread.
 */
final class ExecChannel implements ProcessChannel {

    private static final Logger LOG = LoggerFactory.getLogger(ExecChannel.class);

    private static final AtomicInteger THREADS = new AtomicInteger();

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

    /**
     * @param user       the run's {@code uid:gid}, the gid being the run's own
     * @param helperUser the user of helper execs ({@code uid:gid} with a gid no run has)
     * @param runGid     the run's group id
     * @param controlDir the run's control directory (pid file, stdin FIFO), outside the workspace
     */
    ExecChannel(DockerConnection docker, String containerId, String user, String helperUser, long runGid,
                String controlDir) {
        this.docker = docker;
        this.containerId = containerId;
        this.user = user;
        this.helperUser = helperUser;
        this.runGid = runGid;
        this.controlDir = controlDir;
    }

    @Override
    public ChannelProcess start(ProgramLaunch launch, OutputSink output) {
        String execId;
        try {
            execId = docker.control().execCreateCmd(containerId).withCmd(launch.argv().toArray(String[]::new))
                    .withUser(user).withWorkingDir("/").withAttachStdin(true).withAttachStdout(true)
                    .withAttachStderr(true).withTty(false).exec().getId();
        } catch (RuntimeException e) {
            throw docker.translate(e, "start a program in the workspace's container");
        }
        ExecProcess p = new ExecProcess(execId, output);
        try {
            docker.streams().execStartCmd(execId).withDetach(false).withTty(false).withStdIn(p.stdin.input())
                    .exec(p.callback);
        } catch (RuntimeException e) {
            p.stdin.kill();
            throw docker.translate(e, "start a program in the workspace's container");
        }
        return p;
    }

    private final class ExecProcess implements ChannelProcess {
        final FramedStdin stdin = new FramedStdin();
        final CompletableFuture<Integer> exit = new CompletableFuture<>();
        final CompletableFuture<Void> outputEnd = new CompletableFuture<>();
        final AtomicBoolean killed = new AtomicBoolean();
        final String execId;
        final ResultCallback.Adapter<Frame> callback;

        ExecProcess(String execId, OutputSink sink) {
            this.execId = execId;
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
                    if (!killed.get()) {
                        LOG.debug("exec stream of a run failed", t);
                        byte[] note = ("\n[codeexec] lost the connection to the program's output ("
                                + t.getClass().getSimpleName() + ")\n").getBytes(StandardCharsets.UTF_8);
                        sink.write(StdStream.STDERR, note, 0, note.length);
                    }
                    ended();
                    super.onError(t);
                }

                @Override
                public void onComplete() {
                    ended();
                    super.onComplete();
                }
            };
        }

        private void ended() {
            stdin.kill();
            if (outputEnd.complete(null)) {
                WAITER.execute(() -> {
                    int code;
                    try {
                        code = Execs.exitCode(docker, execId);
                    } catch (RuntimeException e) {
                        code = -1;
                    }
                    exit.complete(code);
                });
            }
        }

        @Override
        public OutputStream stdin() {
            return stdin;
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
            if (exit.isDone() || outputEnd.isDone()) {
                return;
            }
            String sig = signal == ProgramSignal.INTERRUPT ? "INT" : "TERM";
            try {
                Execs.run(docker, containerId, helperUser,
                        List.of("sh", "-c", ExecScripts.SIGNAL, "sh", controlDir, Long.toString(runGid), sig));
            } catch (RuntimeException e) {
                LOG.debug("could not signal a run", e);
            }
        }

        @Override
        public void killTree() {
            if (outputEnd.isDone() && exit.isDone()) {
                return;
            }
            if (!killed.compareAndSet(false, true)) {
                return;
            }
            try {
                Execs.run(docker, containerId, helperUser,
                        List.of("sh", "-c", ExecScripts.KILL_GROUP, "sh", Long.toString(runGid)));
            } catch (RuntimeException e) {
                LOG.warn("could not kill a run's processes in its container: {}", e.getMessage());
            }
            try {
                outputEnd.get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                // The stream did not end: close it, so that the run is over for the core.
                Execs.closeQuietly(callback);
                ended();
            }
        }
    }
}
