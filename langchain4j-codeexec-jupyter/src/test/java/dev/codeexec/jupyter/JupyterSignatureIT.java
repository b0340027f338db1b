package dev.codeexec.jupyter;

import static dev.codeexec.jupyter.JupyterTesting.cell;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeExecutionResult;
import org.junit.jupiter.api.Test;

/**
 * Every message the kernel sends is verified: a message signed with another key is dropped, on the very socket the
 * kernel publishes on, while the same message signed with the kernel's own session is delivered (the control).
 */
class JupyterSignatureIT extends KernelFixture {

    JupyterSignatureIT() {
        super("signature", JupyterEngine::create);
    }

    @Test
    void should_drop_a_message_with_a_bad_signature_and_deliver_a_genuine_one() {
        CodeExecutionResult r = cell(engine, ws, """
                from jupyter_client.session import Session
                k = get_ipython().kernel
                parent = k.get_parent('shell')
                forger = Session(key=b'not-the-connection-key', username='forger')
                forger.send(k.iopub_socket, 'stream', {'name': 'stdout', 'text': 'FORGED\\n'}, parent=parent)
                k.session.send(k.iopub_socket, 'stream', {'name': 'stdout', 'text': 'GENUINE\\n'}, parent=parent)
                'done'
                """);

        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("GENUINE").contains("'done'").doesNotContain("FORGED");
        assertThat(engine.kernel(ws).droppedMessages()).isEqualTo(1);
        assertThat(cell(engine, ws, "print('next')").output()).isEqualTo("next\n");
    }
}
