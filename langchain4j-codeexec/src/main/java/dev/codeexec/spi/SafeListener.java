package dev.codeexec.spi;

import dev.codeexec.engine.OutputListener;
import dev.codeexec.engine.StdStream;
import java.util.Arrays;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shields a run from an {@link OutputListener} that throws: logged once, then ignored for the rest of the run.
 * Internal: not part of the API.
 */
final class SafeListener {

    private static final Logger LOG = LoggerFactory.getLogger(SafeListener.class);

    private final OutputListener delegate;
    private volatile boolean broken;

    /** @param delegate the listener, or null for none */
    public SafeListener(OutputListener delegate) {
        this.delegate = delegate;
    }

    /** Passes a copy of {@code buf[off, off+n)} on, unless the listener threw before. */
    public void onOutput(StdStream stream, byte[] buf, int off, int n) {
        if (delegate == null || broken) {
            return;
        }
        try {
            delegate.onOutput(stream, Arrays.copyOfRange(buf, off, off + n));
        } catch (RuntimeException | Error e) {
            // An Error too (an assertion in a test's listener, say): were it to end the pump, the program would
            // block on a full pipe until its timeout.
            broken = true;
            LOG.warn("output listener threw; it is ignored for the rest of this run", e);
        }
    }
}
