package dev.codeexec.jupyter;

import dev.codeexec.jupyter.JupyterMessage.Channel;
import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.List;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The sockets of one {@link KernelClient} and the codec that signs and verifies its messages: the shell, control and
 * stdin DEALERs, the IOPub SUB and the heartbeat REQ. Created, used and destroyed by the client's socket reader only
 * (jeromq sockets are not thread-safe; see the client's thread roles).
 */
record KernelSockets(ZMQ.Socket shell, ZMQ.Socket control, ZMQ.Socket stdin, ZMQ.Socket iopub, ZMQ.Socket hb,
                     WireCodec codec) {

    /**
     * Creates the five sockets in {@code zmq} (each added to {@code all} as soon as it exists, so that the caller
     * destroys what was created when a later step fails), connects them to the kernel's ports and registers their
     * {@code ZMQ_FD} channels with {@code selector}.
     */
    static KernelSockets connect(ZContext zmq, ConnectionInfo info, byte[] identity, Selector selector,
                                 List<ZMQ.Socket> all) throws IOException {
        KernelSockets s = new KernelSockets(socket(zmq, all, SocketType.DEALER), socket(zmq, all, SocketType.DEALER),
                socket(zmq, all, SocketType.DEALER), socket(zmq, all, SocketType.SUB), socket(zmq, all, SocketType.REQ),
                new WireCodec(info.key()));
        // The kernel sends input_request to the identity that sent the execute_request: stdin must share it.
        s.shell.setIdentity(identity);
        s.stdin.setIdentity(identity);
        // A full receive queue would drop IOPub messages, among them the idle status that completes a cell;
        // the reader drains at wire speed and bounds what it keeps per request.
        s.iopub.setRcvHWM(0);
        s.iopub.subscribe(new byte[0]);
        // A missed echo must not wedge the REQ state machine: relaxed, with replies matched to their request.
        s.hb.setReqRelaxed(true);
        s.hb.setReqCorrelate(true);
        s.iopub.connect(info.iopubAddress());
        s.shell.connect(info.shellAddress());
        s.control.connect(info.controlAddress());
        s.stdin.connect(info.stdinAddress());
        s.hb.connect(info.hbAddress());
        for (ZMQ.Socket socket : all) {
            // ZMQ_FD: readable when the socket has news; its events tell what (it may have news without it).
            socket.getFD().register(selector, SelectionKey.OP_READ);
        }
        return s;
    }

    /** The socket a caller's message goes out on. */
    ZMQ.Socket outbound(Channel channel) {
        return channel == Channel.CONTROL ? control : channel == Channel.STDIN ? stdin : shell;
    }

    private static ZMQ.Socket socket(ZContext zmq, List<ZMQ.Socket> sockets, SocketType type) {
        ZMQ.Socket s = zmq.createSocket(type);
        s.setLinger(0); // close() must not wait for unsent messages to a kernel that may be gone
        sockets.add(s);
        return s;
    }
}
