package dev.codeexec.container;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.DockerException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.transport.DockerHttpClient;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.WorkspaceGoneException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The connection to one Docker engine: two docker-java clients over the JDK-only transport, and the one translator
 * from transport failures to the library's exceptions.
 *
 * <p>Two clients because docker-java leaves timeouts unset: {@link #control()} bounds every response
 * ({@link #RESPONSE_TIMEOUT}), {@link #streams()} carries exec attach streams, which may be silent for as long as a
 * program runs (their end is bounded by the run's timeout and tree kill instead).
 */
final class DockerConnection implements AutoCloseable {

    /** {@value} s: how long to wait for a TCP or socket connection. */
    static final int CONNECT_TIMEOUT_SECONDS = 5;

    /** How long any non-streaming API call may take. */
    static final Duration RESPONSE_TIMEOUT = Duration.ofSeconds(60);

    /** How long a ping result (good or bad) is reused. */
    static final Duration PING_CACHE = Duration.ofSeconds(5);

    private final String endpoint;
    private final DockerHttpClient controlHttp;
    private final DockerHttpClient streamHttp;
    private final DockerClient control;
    private final DockerClient streams;
    private final AtomicReference<Ping> lastPing = new AtomicReference<>();
    private final java.net.URI host;

    private record Ping(long atNanos, RuntimeException failure) {
    }

    private DockerConnection(DockerClientConfig config, String source) {
        this.host = config.getDockerHost();
        this.endpoint = describe(config.getDockerHost(), source);
        this.controlHttp = new ZerodepDockerHttpClient.Builder().dockerHost(config.getDockerHost())
                .sslConfig(config.getSSLConfig()).maxConnections(32)
                .connectionTimeout(Duration.ofSeconds(CONNECT_TIMEOUT_SECONDS)).responseTimeout(RESPONSE_TIMEOUT)
                .build();
        this.streamHttp = new ZerodepDockerHttpClient.Builder().dockerHost(config.getDockerHost())
                .sslConfig(config.getSSLConfig()).maxConnections(256)
                .connectionTimeout(Duration.ofSeconds(CONNECT_TIMEOUT_SECONDS)).build();
        this.control = DockerClientImpl.getInstance(config, controlHttp);
        this.streams = DockerClientImpl.getInstance(config, streamHttp);
    }

    /**
     * A connection configured as docker-java does: {@code DOCKER_HOST} (default the local UNIX socket),
     * {@code DOCKER_TLS_VERIFY} and {@code DOCKER_CERT_PATH} from the environment or system properties, unless
     * {@code dockerHost} or {@code certPath} are given.
     */
    static DockerConnection open(String dockerHost, String certPath, Boolean tlsVerify) {
        return open(dockerHost, certPath, tlsVerify, System.getenv("DOCKER_HOST"));
    }

    /** {@link #open(String, String, Boolean)} with the value of {@code DOCKER_HOST} given, for tests. */
    static DockerConnection open(String dockerHost, String certPath, Boolean tlsVerify, String dockerHostVariable) {
        String source = dockerHost != null ? "set by ContainerEngine.Builder.dockerHost"
                : dockerHostVariable == null || dockerHostVariable.isBlank() ? "DOCKER_HOST unset"
                : "from DOCKER_HOST";
        DefaultDockerClientConfig.Builder b = DefaultDockerClientConfig.createDefaultConfigBuilder();
        if (dockerHost != null) {
            b.withDockerHost(dockerHost);
        }
        if (tlsVerify != null) {
            b.withDockerTlsVerify(tlsVerify);
        }
        if (certPath != null) {
            b.withDockerCertPath(certPath);
        }
        try {
            return new DockerConnection(b.build(), source);
        } catch (RuntimeException e) {
            throw new BackendUnavailableException("the Docker client configuration is invalid ("
                    + e.getClass().getSimpleName() + (dockerHost == null ? "" : ", docker host " + dockerHost + " "
                    + source) + "); check DOCKER_HOST, DOCKER_TLS_VERIFY and DOCKER_CERT_PATH", e);
        }
    }

    /**
     * The endpoint as errors name it, with where it came from: {@code unix:///var/run/docker.sock (DOCKER_HOST
     * unset)}. User information and query are left out (a URI may carry credentials); the tool layer never passes
     * this text to the model, it reaches the application and its log.
     */
    static String describe(java.net.URI host, String source) {
        String shown = host.getScheme() + "://" + (host.getHost() == null ? "" : host.getHost())
                + (host.getPort() < 0 ? "" : ":" + host.getPort()) + (host.getPath() == null ? "" : host.getPath());
        return shown + " (" + source + ")";
    }

    /** Where the Docker engine is ({@code unix:///var/run/docker.sock}, {@code tcp://...}). */
    java.net.URI host() {
        return host;
    }

    DockerClient control() {
        return control;
    }

    DockerClient streams() {
        return streams;
    }

    /** The bounded transport, for the archive HEAD request docker-java has no command for. */
    DockerHttpClient controlHttp() {
        return controlHttp;
    }

    /**
     * Checks that the engine answers, reusing a result younger than {@link #PING_CACHE}: a missing engine fails fast
     * instead of once per call.
     *
     * @throws BackendUnavailableException when it does not answer
     */
    void requireReachable() {
        Ping p = lastPing.get();
        long now = System.nanoTime();
        if (p == null || now - p.atNanos() > PING_CACHE.toNanos()) {
            RuntimeException failure = null;
            try {
                control.pingCmd().exec();
            } catch (RuntimeException e) {
                // Say which endpoint was tried and why it was chosen: the fix differs (start the engine there, or
                // point DOCKER_HOST elsewhere, e.g. at Podman's or a rootless Docker's socket).
                failure = new BackendUnavailableException("Docker is not reachable at " + endpoint + ": "
                        + reason(e) + "; start dockerd or Podman's Docker API service there, or set DOCKER_HOST "
                        + "(and DOCKER_TLS_VERIFY, DOCKER_CERT_PATH for TCP with TLS) to where it listens", e);
            }
            p = new Ping(now, failure);
            lastPing.set(p);
        }
        if (p.failure() != null) {
            throw p.failure();
        }
    }

    /** The failure's cause in a few words: the innermost exception's type (its text may echo server output). */
    private static String reason(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root == e ? e.getClass().getSimpleName()
                : e.getClass().getSimpleName() + " caused by " + root.getClass().getSimpleName();
    }

    /** Forgets the cached ping, after a call failed as if the engine had gone. */
    void forgetPing() {
        lastPing.set(null);
    }

    /**
     * The one translation of docker-java failures: a missing container is a gone workspace, a failed connection is
     * an unavailable backend, anything else is a failure to complete. Messages carry no raw server text (it can name
     * host paths).
     */
    RuntimeException translate(RuntimeException e, String what) {
        if (e instanceof CodeExecException c) {
            return c;
        }
        if (e instanceof NotFoundException) {
            return new WorkspaceGoneException("the workspace's container is gone (" + what + ")");
        }
        if (e instanceof ConflictException) {
            return new WorkspaceGoneException("the workspace's container is not running (" + what + ")");
        }
        if (e instanceof DockerException d) {
            return new CodeExecException("the Docker engine refused to " + what + " (HTTP " + d.getHttpStatus() + ")",
                    e);
        }
        if (e instanceof UncheckedIOException || e.getCause() instanceof IOException) {
            forgetPing();
            return new BackendUnavailableException("lost the connection to the Docker engine at " + endpoint
                    + " while trying to " + what, e);
        }
        return new CodeExecException("could not " + what + " (" + e.getClass().getSimpleName() + ")", e);
    }

    @Override
    public void close() {
        for (AutoCloseable c : new AutoCloseable[] {control, streams, controlHttp, streamHttp}) {
            try {
                c.close();
            } catch (Exception ignored) {
                // Closing sockets; nothing left to release.
            }
        }
    }
}
