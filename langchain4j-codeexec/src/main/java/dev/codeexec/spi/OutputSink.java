package dev.codeexec.spi;

import dev.codeexec.engine.StdStream;

/**
 * Where a {@link ProcessChannel} delivers a program's output. The core supplies it: it applies the output cap, keeps
 * a session's log and forwards chunks to the run's listener.
 *
 * <p>Called from the backend's own reader or callback thread; it never blocks on the program and never calls back
 * into the channel. Thread-safe; chunks of one stream must be delivered in order.
 */
@FunctionalInterface
public interface OutputSink {

    /**
     * Delivers bytes the program wrote. The sink copies what it keeps: the array may be reused after the call.
     */
    void write(StdStream stream, byte[] bytes, int offset, int length);
}
