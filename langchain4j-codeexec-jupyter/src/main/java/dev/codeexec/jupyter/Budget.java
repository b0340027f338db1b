package dev.codeexec.jupyter;

import dev.codeexec.jupyter.JupyterMessage.Channel;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the reader may queue of one request's output; once it is used up, output messages are dropped and counted,
 * so memory stays bounded (by the budget plus one message) even when the consumer is slower than the kernel.
 * Stream bytes are a bound on what waits in the queue: the consumer gives them back as it takes each message
 * ({@link KernelRequest#poll}), so a cell that prints far more than the budget over its life still delivers
 * its last lines. Displays are counted over the request's life. Admitted by the reader; released by the consumer.
 */
final class Budget {
    private final long streamBytes;
    private final int richMessages;
    private final long richBytes;
    private final AtomicLong streamQueued = new AtomicLong();
    private int richCount;
    private long richUsed;
    private final AtomicLong droppedStreamBytes = new AtomicLong();
    private final AtomicLong droppedRich = new AtomicLong();

    /**
     * @param streamBytes  bytes of {@code stream} content frames that may wait in the queue
     * @param richMessages {@code display_data} and {@code update_display_data} messages to queue
     * @param richBytes    bytes of their content frames to queue
     */
    Budget(long streamBytes, int richMessages, long richBytes) {
        this.streamBytes = streamBytes;
        this.richMessages = richMessages;
        this.richBytes = richBytes;
    }

    boolean admit(JupyterMessage m) {
        switch (m.msgType()) {
            case "stream" -> {
                // Admitted while under budget, even if it overshoots: ipykernel batches a burst of prints into
                // one message, and dropping it whole would lose the output the cap would have kept.
                if (streamQueued.get() >= streamBytes) {
                    droppedStreamBytes.addAndGet(m.contentBytes());
                    return false;
                }
                streamQueued.addAndGet(m.contentBytes());
                return true;
            }
            case "display_data", "update_display_data" -> {
                if (richCount >= richMessages || richUsed >= richBytes) {
                    droppedRich.incrementAndGet();
                    return false;
                }
                richCount++;
                richUsed += m.contentBytes();
                return true;
            }
            default -> {
                return true;
            }
        }
    }

    /** The consumer took {@code m} off the queue: its stream bytes no longer wait there. */
    void taken(JupyterMessage m) {
        if (m.channel() == Channel.IOPUB && m.msgType().equals("stream")) {
            streamQueued.addAndGet(-m.contentBytes());
        }
    }

    long droppedStreamBytes() {
        return droppedStreamBytes.get();
    }

    long droppedRich() {
        return droppedRich.get();
    }
}
