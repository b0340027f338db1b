package dev.codeexec.container;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.InspectExecResponse;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.StreamType;
import dev.codeexec.engine.CodeExecException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Short helper execs in a workspace container (a tree kill, a rename, a delete), each an argv, never a command line
 * built from data. Every helper is bounded ({@link #HELPER_TIMEOUT}); output is kept up to {@link #MAX_OUTPUT}.
 */
final class Execs {

    /** How long a helper exec may take. */
    static final Duration HELPER_TIMEOUT = Duration.ofSeconds(30);

    /** How long an exec's status may take to show after its output ended. */
    static final Duration EXIT_POLL = Duration.ofSeconds(10);

    /** {@value} bytes of a helper's output are kept. */
    static final int MAX_OUTPUT = 64 << 10;

    private Execs() {
    }

    /** What a helper printed and its exit status. */
    record Result(int exitCode, String stdout, String stderr) {
        boolean ok() {
            return exitCode == 0;
        }
    }

    /**
     * Runs {@code argv} as {@code user} and waits for it.
     *
     * @throws CodeExecException (translated) when it cannot be started or does not end in time
     */
    static Result run(DockerConnection docker, String containerId, String user, List<String> argv) {
        String execId;
        try {
            execId = docker.control().execCreateCmd(containerId).withCmd(argv.toArray(String[]::new))
                    .withUser(user).withAttachStdout(true).withAttachStderr(true).withAttachStdin(false)
                    .withTty(false).exec().getId();
        } catch (RuntimeException e) {
            throw docker.translate(e, "start a helper in the workspace's container");
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        ResultCallback.Adapter<Frame> cb = new ResultCallback.Adapter<>() {
            @Override
            public void onNext(Frame f) {
                ByteArrayOutputStream to = f.getStreamType() == StreamType.STDERR ? err : out;
                synchronized (to) {
                    if (to.size() < MAX_OUTPUT) {
                        to.write(f.getPayload(), 0, Math.min(f.getPayload().length, MAX_OUTPUT - to.size()));
                    }
                }
            }

            @Override
            public void onError(Throwable t) {
                // Not the template's onError, which logs an ERROR with a stack trace: the failure is thrown below.
                failure.compareAndSet(null, t);
                closeQuietly(this);
            }
        };
        try {
            docker.streams().execStartCmd(execId).withDetach(false).withTty(false).exec(cb);
            if (!cb.awaitCompletion(HELPER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new CodeExecException("a helper in the workspace's container did not end within "
                        + HELPER_TIMEOUT.toSeconds() + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CodeExecException("interrupted while waiting for a helper in the workspace's container", e);
        } catch (RuntimeException e) {
            throw docker.translate(e, "run a helper in the workspace's container");
        } finally {
            closeQuietly(cb);
        }
        if (failure.get() != null) {
            Throwable t = failure.get();
            throw docker.translate(t instanceof RuntimeException r ? r : new UncheckedIOException(
                    t instanceof IOException io ? io : new IOException(t)), "run a helper in the workspace's container");
        }
        int code = exitCode(docker, execId);
        synchronized (out) {
            synchronized (err) {
                return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
            }
        }
    }

    /**
     * The exit status of an exec whose output ended. Docker may record it a moment after the stream closed, so it is
     * polled briefly; -1 when it never shows.
     */
    static int exitCode(DockerConnection docker, String execId) {
        Integer code = exitCodeOrNull(docker, execId);
        return code == null ? -1 : code;
    }

    /**
     * As {@link #exitCode}, but null when the exec is still running after {@link #EXIT_POLL} (or the caller was
     * interrupted).
     *
     * @throws CodeExecException (translated) when the engine does not answer
     */
    static Integer exitCodeOrNull(DockerConnection docker, String execId) {
        long end = System.nanoTime() + EXIT_POLL.toNanos();
        long pause = 2;
        while (true) {
            InspectExecResponse r;
            try {
                r = docker.control().inspectExecCmd(execId).exec();
            } catch (RuntimeException e) {
                throw docker.translate(e, "read a program's exit status");
            }
            if (!Boolean.TRUE.equals(r.isRunning()) && r.getExitCodeLong() != null) {
                return r.getExitCodeLong().intValue();
            }
            if (System.nanoTime() > end) {
                return null;
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
            pause = Math.min(pause * 2, 50);
        }
    }

    static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // Nothing left to release.
        }
    }
}
