package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.testing.Requirements;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The relay scripts, perl and python alike, run on this host against a loopback port (in a pod they listen on the
 * pod's own loopback): the frames they send for a connection, what they do with the engine's, and how they end.
 * Bounded by the class timeout; nothing waits on a clock.
 */
@Timeout(120)
class PodRelayTest {

    private Process relay;
    private DataInputStream frames;
    private OutputStream engine;
    private int port;

    /** A frame from the relay. */
    record Frame(int type, int id, String payload) {
    }

    private void start(PodScripts.Reaper reaper) throws IOException {
        String interpreter = reaper == PodScripts.Reaper.PERL ? "perl" : "python3";
        Requirements.require(Requirements.findCommand(interpreter) != null, interpreter);
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        List<String> argv = new ArrayList<>(PodRelay.argv(reaper).subList(5, PodRelay.argv(reaper).size()));
        argv.add(PodRelay.script(reaper));
        argv.add(Integer.toString(port));
        relay = new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        frames = new DataInputStream(relay.getInputStream());
        engine = relay.getOutputStream();
        assertThat(next()).isEqualTo(new Frame(TunnelFrames.READY, 0, ""));
    }

    @AfterEach
    void stop() {
        if (relay != null) {
            relay.destroyForcibly();
        }
    }

    private Frame next() throws IOException {
        int type = frames.readUnsignedByte();
        int id = frames.readInt();
        byte[] p = new byte[frames.readInt()];
        frames.readFully(p);
        return new Frame(type, id, new String(p, StandardCharsets.ISO_8859_1));
    }

    private void send(byte type, int id, String payload) throws IOException {
        byte[] p = payload.getBytes(StandardCharsets.ISO_8859_1);
        engine.write(TunnelFrames.encode(type, id, p, 0, p.length));
        engine.flush();
    }

    private Socket connect() throws IOException {
        return new Socket(InetAddress.getLoopbackAddress(), port);
    }

    @ParameterizedTest
    @EnumSource(value = PodScripts.Reaper.class, names = {"PERL", "PYTHON"})
    void should_carry_a_connection_both_ways_and_close_it_once_both_sides_ended(PodScripts.Reaper reaper)
            throws Exception {
        start(reaper);
        try (Socket client = connect()) {
            Frame open = next();
            assertThat(open.type()).isEqualTo(TunnelFrames.OPEN);
            int id = open.id();
            client.getOutputStream().write("ping".getBytes(StandardCharsets.US_ASCII));
            assertThat(next()).isEqualTo(new Frame(TunnelFrames.DATA, id, "ping"));
            send(TunnelFrames.DATA, id, "pong");
            assertThat(new String(client.getInputStream().readNBytes(4), StandardCharsets.US_ASCII))
                    .isEqualTo("pong");
            client.shutdownOutput();
            assertThat(next()).isEqualTo(new Frame(TunnelFrames.END, id, ""));
            send(TunnelFrames.END, id, "");
            assertThat(client.getInputStream().read()).isEqualTo(-1);
            assertThat(next()).isEqualTo(new Frame(TunnelFrames.CLOSE, id, ""));
        }
    }

    @ParameterizedTest
    @EnumSource(value = PodScripts.Reaper.class, names = {"PERL", "PYTHON"})
    void should_deliver_what_it_holds_for_a_connection_before_the_engines_close(PodScripts.Reaper reaper)
            throws Exception {
        start(reaper);
        try (Socket client = connect()) {
            int id = next().id();
            send(TunnelFrames.DATA, id, new String(PodTunnel.UNAVAILABLE, StandardCharsets.US_ASCII));
            send(TunnelFrames.CLOSE, id, "");
            assertThat(new String(client.getInputStream().readAllBytes(), StandardCharsets.US_ASCII))
                    .startsWith("HTTP/1.1 502 the engine's egress proxy is not running");
        }
        // a frame for a connection the relay does not know is answered with its close; the relay goes on
        send(TunnelFrames.DATA, 12345, "stale");
        assertThat(next()).isEqualTo(new Frame(TunnelFrames.CLOSE, 12345, ""));
        send(TunnelFrames.CLOSE, 12346, "");
        try (Socket again = connect()) {
            assertThat(next().type()).isEqualTo(TunnelFrames.OPEN);
        }
    }

    @ParameterizedTest
    @EnumSource(value = PodScripts.Reaper.class, names = {"PERL", "PYTHON"})
    void should_exit_with_status_3_on_a_malformed_frame_and_0_on_bye_or_end_of_stdin(PodScripts.Reaper reaper)
            throws Exception {
        start(reaper);
        engine.write(new byte[] {9, 0, 0, 0, 0, 0, 0, 0, 0}); // an unknown type
        engine.flush();
        assertThat(relay.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(relay.exitValue()).isEqualTo(3);

        start(reaper);
        engine.write(java.nio.ByteBuffer.allocate(9).put(TunnelFrames.DATA).putInt(1)
                .putInt(TunnelFrames.MAX_PAYLOAD + 1).array()); // a length over the bound
        engine.flush();
        assertThat(relay.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(relay.exitValue()).isEqualTo(3);

        start(reaper);
        send(TunnelFrames.BYE, 0, "");
        assertThat(relay.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(relay.exitValue()).isZero();

        start(reaper);
        engine.close();
        assertThat(relay.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(relay.exitValue()).isZero();
    }
}
