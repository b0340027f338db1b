package dev.codeexec.jupyter;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Tells whether a loopback connection accepted by this JVM was opened by this JVM: the peer's port names its socket
 * in {@code /proc/net/tcp} (and {@code tcp6}, where a dual-stack socket shows), whose inode must be among this
 * process's open files ({@code /proc/self/fd}). Any other process of the host (another user's, or a program of a
 * workspace running on the host) is refused, so that nothing but this JVM's kernel client can reach a relayed kernel
 * or read its IOPub stream. Linux only: elsewhere, and when {@code /proc} cannot be read, every peer is refused.
 *
 * <p>Stateless; thread-safe.
 */
final class LoopbackPeers {

    private static final List<Path> TABLES = List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));
    private static final String ESTABLISHED = "01";

    private LoopbackPeers() {
    }

    /** True when {@code accepted}'s peer is a socket this process holds open. */
    static boolean ownPeer(Socket accepted) {
        try {
            Set<String> inodes = peerInodes(accepted.getPort(), accepted.getLocalPort());
            if (inodes.isEmpty()) {
                return false;
            }
            try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
                return fds.anyMatch(fd -> {
                    try {
                        String target = Files.readSymbolicLink(fd).toString();
                        return target.startsWith("socket:[")
                                && inodes.contains(target.substring(8, target.length() - 1));
                    } catch (IOException | UnsupportedOperationException e) {
                        return false; // closed meanwhile, or not a link
                    }
                });
            }
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** True when {@code accepted}'s peer socket still exists (ours or not): a refusal of one that is gone is no alarm. */
    static boolean peerExists(Socket accepted) {
        try {
            return !peerInodes(accepted.getPort(), accepted.getLocalPort()).isEmpty();
        } catch (IOException | RuntimeException e) {
            return true;
        }
    }

    /** Inodes of established sockets whose local port is {@code peerPort} and remote port {@code ourPort}. */
    private static Set<String> peerInodes(int peerPort, int ourPort) throws IOException {
        Set<String> inodes = new HashSet<>();
        for (Path table : TABLES) {
            if (!Files.isReadable(table)) {
                continue;
            }
            for (String line : Files.readAllLines(table)) {
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
                String[] f = line.trim().split("\\s+");
                if (f.length < 10 || !f[3].equals(ESTABLISHED)) {
                    continue;
                }
                if (port(f[1]) == peerPort && port(f[2]) == ourPort && !f[9].equals("0")) {
                    inodes.add(f[9]);
                }
            }
        }
        return inodes;
    }

    private static int port(String address) {
        int colon = address.lastIndexOf(':');
        try {
            return colon < 0 ? -1 : Integer.parseInt(address.substring(colon + 1), 16);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
