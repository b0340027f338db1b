package dev.codeexec.jupyter;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * A kernel's connection parameters: five loopback TCP ports and the signing key, as written to the connection file
 * the kernel reads at start ({@code -f <file>}).
 *
 * <p>The key is 32 random bytes in hex. The file is created with mode 0600 in a directory of the engine's own (mode
 * 0700), never in a workspace, and removed once the kernel is ready: after the handshake the key lives only in the
 * kernel and in this JVM.
 *
 * @param shellPort   the shell ROUTER's port
 * @param iopubPort   the IOPub PUB's port
 * @param stdinPort   the stdin ROUTER's port
 * @param controlPort the control ROUTER's port
 * @param hbPort      the heartbeat REP's port
 * @param key         the HMAC-SHA256 key, as the hex text both sides use as UTF-8 bytes
 */
record ConnectionInfo(int shellPort, int iopubPort, int stdinPort, int controlPort, int hbPort, String key) {

    static final String IP = "127.0.0.1";
    static final String SIGNATURE_SCHEME = "hmac-sha256";

    private static final SecureRandom RANDOM = new SecureRandom();

    /** Hides the key: a record's default would print it. */
    @Override
    public String toString() {
        return "ConnectionInfo{shell=" + shellPort + ", iopub=" + iopubPort + ", stdin=" + stdinPort + ", control="
                + controlPort + ", hb=" + hbPort + ", key=<hidden>}";
    }

    /**
     * Five free loopback ports and a new key. Ports are found by binding port 0 and closing again, so another process
     * may take one before the kernel binds it; the kernel then fails to start and the caller tries again with new
     * ports.
     */
    static ConnectionInfo allocate() {
        List<ServerSocket> held = new ArrayList<>();
        try {
            InetAddress loopback = InetAddress.getByName(IP);
            int[] ports = new int[5];
            // All five are held open together, so the five differ.
            for (int i = 0; i < ports.length; i++) {
                ServerSocket s = new ServerSocket(0, 1, loopback);
                held.add(s);
                ports[i] = s.getLocalPort();
            }
            byte[] key = new byte[32];
            RANDOM.nextBytes(key);
            return new ConnectionInfo(ports[0], ports[1], ports[2], ports[3], ports[4], HexFormat.of().formatHex(key));
        } catch (IOException e) {
            throw new BackendUnavailableException("cannot find free loopback ports for a Jupyter kernel: "
                    + e.getClass().getSimpleName(), e);
        } finally {
            for (ServerSocket s : held) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // Closing a bound server socket does not fail in practice; nothing to do if it does.
                }
            }
        }
    }

    String shellAddress() {
        return address(shellPort);
    }

    String iopubAddress() {
        return address(iopubPort);
    }

    String stdinAddress() {
        return address(stdinPort);
    }

    String controlAddress() {
        return address(controlPort);
    }

    String hbAddress() {
        return address(hbPort);
    }

    private static String address(int port) {
        return "tcp://" + IP + ":" + port;
    }

    /** The connection file's JSON, in the form kernels and jupyter_client use. */
    byte[] toJson(ObjectMapper json) {
        ObjectNode o = json.createObjectNode();
        o.put("transport", "tcp");
        o.put("ip", IP);
        o.put("shell_port", shellPort);
        o.put("iopub_port", iopubPort);
        o.put("stdin_port", stdinPort);
        o.put("control_port", controlPort);
        o.put("hb_port", hbPort);
        o.put("signature_scheme", SIGNATURE_SCHEME);
        o.put("key", key);
        o.put("kernel_name", "python3");
        try {
            return json.writeValueAsBytes(o);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Writes the connection file: created new with mode 0600 (it must not exist), so no other user can read the key
     * even for an instant.
     */
    void write(Path file, ObjectMapper json) {
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.write(file, toJson(json), StandardOpenOption.TRUNCATE_EXISTING);
        } catch (FileAlreadyExistsException e) {
            throw new CodeExecException("kernel connection file exists already: " + file.getFileName(), e);
        } catch (IOException e) {
            throw new BackendUnavailableException("cannot write a kernel connection file: "
                    + e.getClass().getSimpleName(), e);
        }
    }
}
