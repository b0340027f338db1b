package dev.codeexec.jupyter;

import dev.codeexec.jupyter.JupyterMessage.Channel;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One request of a {@link KernelClient} in flight: its id and the queue its messages arrive on. Close it when done.
 * The client's reader thread {@linkplain #offer offers} messages; the caller {@linkplain #poll polls} them.
 */
final class KernelRequest implements AutoCloseable {
    private final String msgId;
    private final Budget budget;
    private final BlockingQueue<JupyterMessage> queue;
    /** The client's requests in flight, which route messages here until this request is closed. */
    private final Map<String, KernelRequest> routing;

    KernelRequest(String msgId, Budget budget, BlockingQueue<JupyterMessage> queue,
                  Map<String, KernelRequest> routing) {
        this.msgId = msgId;
        this.budget = budget;
        this.queue = queue;
        this.routing = routing;
    }

    String msgId() {
        return msgId;
    }

    Budget budget() {
        return budget;
    }

    /** Reader thread only: queues a message of this request, unless its budget refuses a stream message. */
    void offer(JupyterMessage m) {
        if (budget != null && m.channel() == Channel.IOPUB && !budget.admit(m)) {
            return;
        }
        queue.offer(m);
    }

    /** Tells the waiting caller that the kernel died, whatever the budget says. Any thread. */
    void deliverDeath() {
        queue.offer(JupyterMessage.DEATH);
    }

    /** The next message, waiting up to {@code nanos}; null when none came. */
    JupyterMessage poll(long nanos) throws InterruptedException {
        JupyterMessage m = queue.poll(Math.max(0, nanos), TimeUnit.NANOSECONDS);
        if (m != null && budget != null) {
            budget.taken(m);
        }
        return m;
    }

    /** Stops routing to this request; later messages for it are dropped. */
    @Override
    public void close() {
        routing.remove(msgId, this);
    }
}
