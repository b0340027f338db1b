package dev.codeexec.container;

import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A second Docker engine of the test's own, listening on a loopback TCP port with TLS (client certificates required)
 * and on a UNIX socket of its own: its own data root (overlay2 in a directory of its own, sharing no storage with the first), exec root,
 * pid file, no bridge and no iptables. Certificates are made with openssl; the test image is copied over with
 * {@code docker save | docker load}, since no registry is reachable.
 */
final class SecondDockerd implements AutoCloseable {

    final Path dir;
    final Path certs;
    final int port;
    private final Process daemon;

    private SecondDockerd(Path dir, int port, Process daemon) {
        this.dir = dir;
        this.certs = dir.resolve("certs");
        this.port = port;
        this.daemon = daemon;
    }

    String tcpHost() {
        return "tcp://127.0.0.1:" + port;
    }

    String unixHost() {
        return "unix://" + dir.resolve("docker.sock");
    }

    /** Skips (fails in strict mode) where no second daemon can run: not root, no dockerd, no openssl. */
    static SecondDockerd start(String image) throws Exception {
        Requirements.require("0".equals(run(List.of("id", "-u")).strip()), "root, to start a second dockerd");
        String dockerd = Requirements.requireCommand("dockerd");
        Requirements.requireCommand("openssl");
        Requirements.requireCommand("docker");
        // A short path: a UNIX socket path must stay under 108 bytes.
        Path dir = Files.createTempDirectory(Path.of("/tmp"), "cx-d2-");
        makeCertificates(dir.resolve("certs"));
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        Path c = dir.resolve("certs");
        Process p = new ProcessBuilder(dockerd, "--data-root", dir.resolve("data").toString(),
                "--exec-root", dir.resolve("exec").toString(), "--pidfile", dir.resolve("dockerd.pid").toString(),
                "-H", "unix://" + dir.resolve("docker.sock"), "-H", "tcp://127.0.0.1:" + port,
                "--tlsverify", "--tlscacert", c.resolve("ca.pem").toString(),
                "--tlscert", c.resolve("server-cert.pem").toString(), "--tlskey", c.resolve("server-key.pem").toString(),
                "--bridge=none", "--iptables=false", "--ip-masq=false", "--storage-driver=overlay2")
                .redirectErrorStream(true).redirectOutput(dir.resolve("dockerd.log").toFile()).start();
        SecondDockerd d = new SecondDockerd(dir, port, p);
        try {
            long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!d.answers()) {
                if (!p.isAlive() || System.nanoTime() > end) {
                    throw new IllegalStateException("the second dockerd did not start: "
                            + Files.readString(dir.resolve("dockerd.log")));
                }
                Thread.sleep(200);
            }
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
