package dev.codeexec.sandbox;

import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/** A session that leaves the engine's live set and releases its control groups when closed. */
final class SandboxSession implements ProgramSession {

    private final ProgramSession delegate;
    private final Set<ProgramSession> live;
    private final Runnable release;
    private final AtomicBoolean closed = new AtomicBoolean();

    SandboxSession(ProgramSession delegate, Set<ProgramSession> live, Runnable release) {
        this.delegate = delegate;
        this.live = live;
        this.release = release;
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
