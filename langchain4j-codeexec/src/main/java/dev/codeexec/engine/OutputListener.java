package dev.codeexec.engine;

/**
 * Receives a program's output as it arrives (engines with {@link Capabilities#streaming()}), chunk by chunk, before
 * any cap is applied to what {@link RunResult} keeps. Chunks may split a multi-byte character.
 *
 * <p>Called from a reader thread of the run: return quickly, do not block, do not throw (a throwing listener is
 * logged and then ignored for the rest of the run), and do not call back into the engine.
 */
@FunctionalInterface
public interface OutputListener {

    /**
     * @param stream which stream the bytes came from
     * @param chunk  the bytes; the array is the listener's to keep
     */
    void onOutput(StdStream stream, byte[] chunk);
}
