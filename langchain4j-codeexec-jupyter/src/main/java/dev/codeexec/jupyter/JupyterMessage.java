package dev.codeexec.jupyter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.io.IOException;

/**
 * One message received from a kernel, its signature verified: where it came from, its type, the id of the request it
 * answers, and its content, parsed when first asked for (the socket reader routes by header alone; the thread that
 * waits for the request reads the content).
 *
 * <p>{@link #DEATH} is not a message: it is put into every waiting request's queue when the kernel died, so a waiting
 * caller wakes up at once.
 */
final class JupyterMessage {

    /** The kernel's channels as this client sees them. */
    enum Channel {
        SHELL, IOPUB, STDIN, CONTROL
    }

    /** The sentinel a waiting request receives when its kernel died; see {@link KernelClient#deathReason()}. */
    static final JupyterMessage DEATH = new JupyterMessage(null, "", "", "", new byte[0]);

    private final Channel channel;
    private final String msgType;
    private final String msgId;
    private final String parentId;
    private final byte[] rawContent;
    private JsonNode content;

    JupyterMessage(Channel channel, String msgType, String msgId, String parentId, byte[] rawContent) {
        this.channel = channel;
        this.msgType = msgType;
        this.msgId = msgId;
        this.parentId = parentId;
        this.rawContent = rawContent;
    }

    Channel channel() {
        return channel;
    }

    /** {@code header.msg_type}, for example {@code stream} or {@code execute_reply}. */
    String msgType() {
        return msgType;
    }

    String msgId() {
        return msgId;
    }

    /** {@code parent_header.msg_id}: the request this message belongs to; empty when it has none. */
    String parentId() {
        return parentId;
    }

    /** Bytes of the content frame: what counts against a request's output budget. */
    int contentBytes() {
        return rawContent.length;
    }

    boolean isDeath() {
        return this == DEATH;
    }

    /**
     * The content, parsed once; a content frame that is not JSON reads as a missing node (every field absent), so a
     * broken message cannot fail the caller. Called by the one thread that consumes the message.
     */
    JsonNode content(ObjectMapper json) {
        if (content == null) {
            try {
                content = json.readTree(rawContent);
            } catch (IOException e) {
                content = MissingNode.getInstance();
            }
            if (content == null) {
                content = MissingNode.getInstance();
            }
        }
        return content;
    }

    @Override
    public String toString() {
        return isDeath() ? "JupyterMessage{DEATH}" : "JupyterMessage{" + channel + " " + msgType + ", parent=" + parentId
                + "}";
    }
}
