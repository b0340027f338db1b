package dev.codeexec.kubernetes;

import dev.codeexec.testing.Requirements;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Runs a generated pod spec for real, without a cluster: {@code podman kube play --network none} on a YAML file written
 * from the fabric8 model, {@code podman exec} into its container, {@code podman kube down} at the end. This proves what
 * the spec asks of a container runtime (user, capabilities, read-only root, no new privileges, memory and CPU limits,
 * no network) is enforced when a runtime honours it. Podman silently ignores some fields (the seccomp profile field,
 * {@code runAsNonRoot}, {@code emptyDir.sizeLimit}, {@code ephemeral-storage}, and NetworkPolicy is no pod field at
 * all): tests here cannot prove those; see docs/kubernetes.md.
 *
 * <p>Two adaptations, made on a copy, never on the caller's pod: every container's image becomes the locally loaded
 * test image ({@value #IMAGE}, copied from Docker by {@code scripts/test}, never pulled), and since that image has
 * no {@code PATH} nor default command, a relative {@code command[0]} is resolved to {@code /usr/bin} or
 * {@code /bin} and {@code PATH} is set when the spec does not set it. The host's rlimit quirk (runc cannot raise
 * nofile/nproc to the host's hard limits on some hosts) is met with a {@code containers.conf} of lower default
 * rlimits passed through {@code CONTAINERS_CONF}: the one {@code scripts/test} wrote ({@code CODEEXEC_PODMAN_CONF})
 * or one of this class's own in its temporary folder.
 *
 * <p>Not thread-safe: one test thread plays, execs and closes. {@link #close()} always takes the pod down and
 * deletes the temporary folder, also after a failed play.
 */
final class PodmanKubePlay implements AutoCloseable {

    /** The test image as podman names it after {@code docker save | podman load}. */
    static final String IMAGE = "localhost/codeexec-python:bookworm";

    static final String PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    private static final long COMMAND_TIMEOUT_SECONDS = 120;

    private final String podman;
    private final Path dir;
    private final Path yaml;
    private final Path conf;
    private final Pod pod;
    private final String network;
    private boolean played;

    private PodmanKubePlay(String podman, Path dir, Pod pod, String network) {
        this.podman = podman;
        this.network = network;
        this.dir = dir;
        this.yaml = dir.resolve("pod.yaml");
        this.conf = containersConf(dir);
        this.pod = pod;
    }

    /**
     * Skips the calling test with a printed reason (fails it in strict mode) unless podman and the test image are
     * there; returns podman's path.
     */
    static String requirePodman() {
        String podman = Requirements.requireCommand("podman");
        Requirements.require(run(List.of(podman, "image", "exists", IMAGE), null, 60).exitCode() == 0,
                "the image " + IMAGE + " in podman (docker save codeexec-python:bookworm | podman load)");
        return podman;
    }

    /**
     * Plays the pod (a copy adapted to the test image) and returns once {@code podman exec true} works in its first
     * container. On failure the pod is taken down before the exception leaves.
     */
    static PodmanKubePlay play(Pod pod) {
        return play(pod, "none");
    }

    /**
     * Plays the pod on the given podman network: {@code "none"} (what {@link #play(Pod)} uses, standing in for the
     * cluster's NetworkPolicy) or another, e.g. {@code "bridge"} for a positive control that shows a probe can see a
     * network.
     */
    static PodmanKubePlay play(Pod pod, String network) {
        String podman = requirePodman();
        Path dir;
        try {
            dir = Files.createTempDirectory("codeexec-podman-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        PodmanKubePlay play = new PodmanKubePlay(podman, dir, adapted(pod), network);
        try {
            play.start();
            return play;
        } catch (RuntimeException | Error e) {
            play.close();
            throw e;
        }
    }

    /** The adapted pod as played. */
    Pod pod() {
        return pod;
    }

    /** The YAML file played. */
    Path yaml() {
        return yaml;
    }

    /** Podman's name for the pod's first container: {@code <pod>-<container>}. */
    String containerName() {
        return pod.getMetadata().getName() + "-" + pod.getSpec().getContainers().get(0).getName();
    }

    /**
     * Runs {@code /bin/sh -c script [args]} in the first container as the container's own user (the pod's uid); the
     * arguments are the script's {@code $0}, {@code $1}, ...
     */
    Result exec(String script, String... args) {
        List<String> cmd = new ArrayList<>(List.of(podman, "exec", containerName(), "/bin/sh", "-c", script));
        cmd.addAll(List.of(args));
        return run(cmd, null, COMMAND_TIMEOUT_SECONDS);
    }

    /** Runs {@code /bin/sh -c script} as the given user (e.g. {@code "0"} to prepare a probe as root). */
    Result execAs(String user, String script) {
        return run(List.of(podman, "exec", "--user", user, containerName(), "/bin/sh", "-c", script), null,
                COMMAND_TIMEOUT_SECONDS);
    }

    /** Runs a podman subcommand with this play's {@code containers.conf}. */
    Result podman(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(podman);
        cmd.addAll(List.of(args));
        return run(cmd, conf, COMMAND_TIMEOUT_SECONDS);
    }

    private void start() {
        try {
            Files.writeString(yaml, Serialization.asYaml(pod));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        played = true;
        Result r = podman("kube", "play", "--network", network, yaml.toString());
        if (r.exitCode() != 0) {
            throw new IllegalStateException("podman kube play failed (" + r.exitCode() + "): " + r.stderr()
                    + "\n" + r.stdout() + "\n--- pod.yaml\n" + Serialization.asYaml(pod));
        }
        Result ready = exec("true");
        if (ready.exitCode() != 0) {
            throw new IllegalStateException("podman exec true failed in the played pod (" + ready.exitCode() + "): "
                    + ready.stderr());
        }
    }

    /** Takes the pod down (its containers and volumes) and deletes the temporary folder; never throws. */
    @Override
    public void close() {
        try {
            if (played) {
                Result down = podman("kube", "down", yaml.toString());
                if (down.exitCode() != 0) {
                    // A half-created pod: remove it by name so no test leaves one behind.
                    podman("pod", "rm", "--force", pod.getMetadata().getName());
                }
            }
        } finally {
            deleteTree(dir);
        }
    }

    private static Pod adapted(Pod original) {
        Pod pod = new PodBuilder(original).build();
        for (Container c : pod.getSpec().getContainers()) {
            c.setImage(IMAGE);
            c.setImagePullPolicy("Never");
            List<String> command = c.getCommand();
            if (command == null || command.isEmpty()) {
                c.setCommand(List.of("/bin/sleep", "infinity"));
            } else if (!command.get(0).startsWith("/")) {
                List<String> absolute = new ArrayList<>(command);
                absolute.set(0, absolute(command.get(0)));
                c.setCommand(absolute);
            }
            List<EnvVar> env = c.getEnv() == null ? new ArrayList<>() : new ArrayList<>(c.getEnv());
            if (env.stream().noneMatch(e -> e.getName().equals("PATH"))) {
                env.add(new EnvVar("PATH", PATH, null));
            }
            c.setEnv(env);
        }
        return pod;
    }

    private static String absolute(String program) {
        for (String d : List.of("/usr/bin", "/bin")) {
            // The image is Debian bookworm (merged /usr): its programs are in /usr/bin, like the host's.
            if (Files.isExecutable(Path.of(d, program))) {
                return d + "/" + program;
            }
        }
        return "/usr/bin/" + program;
    }

    private static Path containersConf(Path dir) {
        String given = System.getenv("CODEEXEC_PODMAN_CONF");
        if (given != null && Files.isRegularFile(Path.of(given))) {
            return Path.of(given);
        }
        Path own = dir.resolve("containers.conf");
        try {
            Files.writeString(own, "[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return own;
    }

    private static Result run(List<String> command, Path conf, long timeoutSeconds) {
        ProcessBuilder pb = new ProcessBuilder(command);
        if (conf != null) {
            pb.environment().put("CONTAINERS_CONF", conf.toString());
        }
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            CompletableFuture<String> out = drain(p.getInputStream());
            CompletableFuture<String> err = drain(p.getErrorStream());
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException("timed out after " + timeoutSeconds + " s: " + command);
            }
            return new Result(p.exitValue(), out.join(), err.join());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + command, e);
        }
    }

    private static CompletableFuture<String> drain(InputStream in) {
        // A thread of its own per stream: the common pool may have a single thread on a small machine.
        return CompletableFuture.supplyAsync(() -> {
            try (in) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "";
            }
        }, task -> {
            Thread t = new Thread(task, "podman-output");
            t.setDaemon(true);
            t.start();
        });
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a leftover temporary folder is harmless
        }
    }

    /** A finished command: its exit code and output. */
    record Result(int exitCode, String stdout, String stderr) {
    }
}
