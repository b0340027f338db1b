package dev.codeexec.container;

import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A second Docker engine of the test's own, listening on a loopback TCP port with TLS (client certificates required)
 * and on a UNIX socket of its own: its own data root (overlay2 in a directory of its own, sharing no storage with the
 * first), exec root (so its own containerd), containerd namespace, pid file, no bridge and no iptables. Certificates
 * are made with openssl; the test image is copied over with {@code docker save | docker load}, since no registry is
 * reachable.
 *
 * <p><strong>It runs in a network namespace of its own</strong> ({@code unshare -n}). A dockerd started with
 * {@code --bridge=none} deletes the interface named {@code docker0} wherever it runs (moby's
 * {@code removeDefaultBridgeInterface}, called when the default bridge is disabled and no sandbox is active); in the
 * host's namespace that is the host engine's bridge, and every later {@code docker run} on the default bridge fails
 * with "could not find bridge docker0". In a namespace of its own it sees only its own loopback, so no host interface,
 * route or iptables rule is within its reach. The TCP listener is still on the host's loopback: it is bound before
 * the namespace is entered and handed to dockerd by socket activation ({@code -H fd://}, {@code LISTEN_FDS}); a socket
 * keeps the namespace it was made in.
 */
final class SecondDockerd implements AutoCloseable {

    final Path dir;
    final Path certs;
    private final Process daemon;
    private volatile int port;

    /**
     * Binds a TCP listener on the host's loopback, records its port, puts it at file descriptor 3 and execs the rest
     * of the argv with {@code LISTEN_FDS=1} and {@code LISTEN_PID} = its own pid ({@code unshare} without
     * {@code --fork} execs dockerd in the same process, so the pid still matches).
     */
    private static final String ACTIVATE = ""
            + "import os, socket, sys\n"
            + "s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
            + "s.bind(('127.0.0.1', 0))\n"
            + "s.listen(128)\n"
            + "with open(sys.argv[1], 'w') as f:\n"
            + "    f.write(str(s.getsockname()[1]))\n"
            + "if s.fileno() != 3:\n"
            + "    os.dup2(s.fileno(), 3)\n"
            + "os.set_inheritable(3, True)\n"
            + "os.environ['LISTEN_FDS'] = '1'\n"
            + "os.environ['LISTEN_PID'] = str(os.getpid())\n"
            + "os.execv(sys.argv[2], sys.argv[2:])\n";

    private SecondDockerd(Path dir, Process daemon) {
        this.dir = dir;
        this.certs = dir.resolve("certs");
        this.daemon = daemon;
    }

    String tcpHost() {
        return "tcp://127.0.0.1:" + port;
    }

    String unixHost() {
        return "unix://" + dir.resolve("docker.sock");
    }

    /**
     * Skips (fails in strict mode) where no second daemon can run: not root, no dockerd, openssl, python3 or
     * unshare.
     */
    static SecondDockerd start(String image) throws Exception {
        Requirements.require("0".equals(run(List.of("id", "-u")).strip()), "root, to start a second dockerd");
        String dockerd = Requirements.requireCommand("dockerd");
        Requirements.requireCommand("openssl");
        Requirements.requireCommand("docker");
        String python = Requirements.requireCommand("python3");
        String unshare = Requirements.requireCommand("unshare");
        // A short path: a UNIX socket path must stay under 108 bytes.
        Path dir = Files.createTempDirectory(Path.of("/tmp"), "cx-d2-");
        makeCertificates(dir.resolve("certs"));
        Path c = dir.resolve("certs");
        Path portFile = dir.resolve("port");
        List<String> argv = new ArrayList<>(List.of(python, "-c", ACTIVATE, portFile.toString(), unshare, "--net",
                "--", dockerd, "--data-root", dir.resolve("data").toString(),
                "--exec-root", dir.resolve("exec").toString(), "--pidfile", dir.resolve("dockerd.pid").toString(),
                "--containerd-namespace", "codeexec-test", "--containerd-plugins-namespace", "codeexec-test-plugins",
                "-H", "unix://" + dir.resolve("docker.sock"), "-H", "fd://",
                "--tlsverify", "--tlscacert", c.resolve("ca.pem").toString(),
                "--tlscert", c.resolve("server-cert.pem").toString(), "--tlskey", c.resolve("server-key.pem").toString(),
                "--bridge=none", "--iptables=false", "--ip6tables=false", "--ip-masq=false",
                "--storage-driver=overlay2"));
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(dir.resolve("dockerd.log")
                .toFile()).start();
        SecondDockerd d = new SecondDockerd(dir, p);
        try {
            long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!d.answers()) {
                if (!p.isAlive() || System.nanoTime() > end) {
                    throw new IllegalStateException("the second dockerd did not start: "
                            + Files.readString(dir.resolve("dockerd.log")));
                }
                Thread.sleep(200);
            }
            d.port = Integer.parseInt(Files.readString(portFile).strip());
            run(List.of("sh", "-c", "docker save \"$1\" | docker -H \"$2\" load", "sh", image, d.unixHost()));
            return d;
        } catch (Exception | Error e) {
            d.close();
            throw e;
        }
    }

    private boolean answers() {
        try {
            run(List.of("docker", "-H", unixHost(), "version"));
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    private static void makeCertificates(Path certs) throws Exception {
        Files.createDirectories(certs);
        Files.writeString(certs.resolve("server.ext"), "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
        Files.writeString(certs.resolve("client.ext"), "extendedKeyUsage=clientAuth\n");
        String script = ""
                + "set -e; cd \"$1\"\n"
                + "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca-key.pem -out ca.pem -days 1"
                + " -subj /CN=codeexec-test-ca\n"
                + "openssl req -newkey rsa:2048 -nodes -keyout server-key.pem -out server.csr -subj /CN=127.0.0.1\n"
                + "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial"
                + " -out server-cert.pem -days 1 -extfile server.ext\n"
                + "openssl req -newkey rsa:2048 -nodes -keyout key.pem -out client.csr -subj /CN=codeexec-client\n"
                + "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial"
                + " -out cert.pem -days 1 -extfile client.ext\n"
                // A client certificate from another CA: the daemon must refuse it.
                + "mkdir -p ../rogue && cd ../rogue\n"
                + "openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 1 -subj /CN=rogue\n"
                + "cp ../certs/ca.pem ca.pem\n";
        run(List.of("sh", "-c", script, "sh", certs.toString()));
    }

    static String run(List<String> argv) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(new ArrayList<>(argv)).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(300, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException(argv.get(0) + " did not end");
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException(argv.get(0) + " failed: " + new String(out));
        }
        return new String(out);
    }

    @Override
    public void close() throws Exception {
        daemon.destroy();
        if (!daemon.waitFor(60, TimeUnit.SECONDS)) {
            daemon.destroyForcibly();
            daemon.waitFor(30, TimeUnit.SECONDS);
        }
        run(List.of("rm", "-rf", "--", dir.toString()));
    }
}
