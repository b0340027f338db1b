package dev.codeexec.local;

import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramSession;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/** A session that leaves the engine's set of live sessions when closed. */
final class TrackedSession implements ProgramSession {

    private final ProgramSession delegate;
    private final Set<ProgramSession> live;

    TrackedSession(ProgramSession delegate, Set<ProgramSession> live) {
        this.delegate = delegate;
        this.live = live;
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
        delegate.close();
        live.remove(delegate);
    }
}
