package dev.codeexec.spi;

import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A session an engine keeps in its set of live sessions, so that closing the engine closes it: closing the session
 * leaves the set and runs the engine's release action (control groups, private files) exactly once.
 */
final class TrackedSession implements ProgramSession {

    private final ProgramSession delegate;
    private final Set<ProgramSession> live;
    private final Runnable release;
    private final AtomicBoolean closed = new AtomicBoolean();

    private TrackedSession(ProgramSession delegate, Set<ProgramSession> live, Runnable release) {
        this.delegate = delegate;
        this.live = live;
        this.release = release;
    }

    /**
     * Wraps {@code delegate}, adds the wrapper to {@code live} and returns it.
     *
     * @param release run once when the session is closed, after the program is gone; null for nothing
     */
    public static ProgramSession track(ProgramSession delegate, Set<ProgramSession> live, Runnable release) {
        TrackedSession s = new TrackedSession(delegate, live, release == null ? () -> { } : release);
        live.add(s);
        return s;
    }

    @Override
    public String id() {
        return delegate.id();
    }

    @Override
    public ProgramPoll poll(long offset, int maxBytes) {
        return delegate.poll(offset, maxBytes);
    }

    @Override
    public ProgramPoll await(Duration wait, long offset, int maxBytes) {
        return delegate.await(wait, offset, maxBytes);
    }

    @Override
    public void write(String data, boolean newline) {
        delegate.write(data, newline);
    }

    @Override
    public void closeStdin() {
        delegate.closeStdin();
    }

    @Override
    public void kill(Duration grace) {
        delegate.kill(grace);
    }

    @Override
    public Optional<Integer> exitCode() {
        return delegate.exitCode();
    }

    @Override
    public void close() {
        try {
            delegate.close();
        } finally {
            if (closed.compareAndSet(false, true)) {
                live.remove(this);
                release.run();
            }
        }
    }
}
