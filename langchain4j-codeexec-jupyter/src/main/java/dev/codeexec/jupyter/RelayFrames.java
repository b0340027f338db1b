package dev.codeexec.jupyter;

import dev.codeexec.spi.StreamFrames;
import java.util.List;

/**
 * The frames between the engine and a kernel's relay program ({@code kernel_relay.py}), in the core's frame format
 * ({@link StreamFrames}): the engine writes them to the relay's stdin, the relay to its stdout.
 *
 * <ul>
 *   <li>{@link #HELLO} (engine to relay, id 0, first): JSON {@code {"key": ...}}, the signing key (never on argv).</li>
 *   <li>{@link #OPEN} (engine to relay): the client connected to a channel; the id is new, the payload names the
 *       channel ({@code shell}, {@code iopub}, {@code stdin}, {@code control}, {@code hb}).</li>
 *   <li>{@link #READY} (relay to engine, id 0): the kernel's sockets exist.</li>
 *   <li>{@link #DATA}, {@link #END} (a half-close), {@link #CLOSE} (both ways): as in the Kubernetes tunnel; a frame
 *       for an id the receiver does not know is answered with a {@code CLOSE} (relay) or ignored (engine).</li>
 *   <li>{@link #SIGNAL} (engine to relay, id 0): SIGINT to the kernel's process group.</li>
 *   <li>{@link #EXIT} (relay to engine, id 0): the kernel exited with the status in the payload; the relay exits.</li>
 *   <li>{@link #FAIL} (relay to engine, id 0): the kernel cannot start (its Python cannot import ipykernel).</li>
 *   <li>{@link #LOOK} (engine to relay, id: the look's number): is {@code $OUTPUT_DIR} empty now?</li>
 *   <li>{@link #OUTPUTS} (relay to engine, the look's id): {@code 0} when {@code $OUTPUT_DIR} is a real directory
 *       (not a link) with no entry, {@code 1} otherwise.</li>
 * </ul>
 *
 * <p>The relay runs as the workspace's user, as its programs do: what it writes may be a program's. The engine's
 * decoder accepts only the types above from it, each within its bound. Constants only.
 */
final class RelayFrames {

    static final byte HELLO = 1;
    static final byte READY = 1;
    static final byte OPEN = 2;
    static final byte DATA = 3;
    static final byte END = 4;
    static final byte CLOSE = 5;
    static final byte SIGNAL = 7;
    static final byte EXIT = 8;
    static final byte FAIL = 9;
    static final byte LOOK = 10;
    static final byte OUTPUTS = 10;

    /** Most bytes of one DATA frame, either way. */
    static final int MAX_PAYLOAD = 32 * 1024;
    /** The relay's exit status when its Python cannot import ipykernel. */
    static final int NO_IPYKERNEL = 97;

    /** What the engine accepts from the relay. */
    static final List<StreamFrames.Type> FROM_RELAY = List.of(
            new StreamFrames.Type(READY, "READY", 0), new StreamFrames.Type(DATA, "DATA", MAX_PAYLOAD),
            new StreamFrames.Type(END, "END", 0), new StreamFrames.Type(CLOSE, "CLOSE", 0),
            new StreamFrames.Type(EXIT, "EXIT", 16), new StreamFrames.Type(FAIL, "FAIL", 4096),
            new StreamFrames.Type(OUTPUTS, "OUTPUTS", 1));

    private RelayFrames() {
    }
}
