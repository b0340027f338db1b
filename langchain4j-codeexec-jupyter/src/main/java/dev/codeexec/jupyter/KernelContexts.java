package dev.codeexec.jupyter;

import org.zeromq.ZContext;

/**
 * The jeromq context of an engine's kernel clients: one I/O thread, daemon threads named after the engine, so that a
 * context nobody closed never keeps a JVM alive. One place for the Jupyter engine and {@link BoundaryKernels}.
 */
final class KernelContexts {

    private KernelContexts() {
    }

    /** A new context whose threads are named {@code prefix + name}. */
    static ZContext create(String prefix) {
        ZContext z = new ZContext(1);
        z.setThreadFactor((runnable, name) -> {
            Thread t = new Thread(runnable, prefix + name);
            t.setDaemon(true);
            return t;
        });
        return z;
    }
}
