package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The generated workspace pod, run for real under {@code podman kube play}, against the container backend's escape
 * probes. Each setting is checked twice: in the generated pod the probe shows the setting holds, and in a copy of the
 * pod without that one setting the same probe shows the opposite, so the probe itself can fail. Podman ignores some
 * fields of the spec (the seccomp profile field, {@code runAsNonRoot}, {@code emptyDir.sizeLimit},
 * {@code ephemeral-storage}; NetworkPolicy is no pod field); those are not proven here (docs/kubernetes.md).
 */
class PodSpecPlayIT {

    private static PodmanKubePlay hardened;

    @BeforeAll
    static void play() {
        hardened = PodmanKubePlay.play(generated());
    }

    @AfterAll
    static void down() {
        if (hardened != null) {
            hardened.close();
        }
    }

    @Test
    void should_hold_no_capability_when_the_generated_pod_drops_all() {
        String probe = "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status";

        assertThat(hardened.exec(probe).stdout().lines().toList()).hasSize(5)
                .allSatisfy(l -> assertThat(l).endsWith("\t0000000000000000"));
        assertThat(hardened.execAs("0", probe).stdout()).as("not even a root process in the pod")
                .contains("CapEff:\t0000000000000000").contains("CapBnd:\t0000000000000000");

        try (PodmanKubePlay control = PodmanKubePlay.play(variant(p -> container(p).getSecurityContext()
                .setCapabilities(null)))) {
            assertThat(control.execAs("0", probe).stdout()).as("control: without drop ALL")
                    .doesNotContain("CapEff:\t0000000000000000").doesNotContain("CapBnd:\t0000000000000000");
        }
    }

    @Test
    void should_refuse_writes_to_the_root_file_system_when_it_is_read_only() {
        String probe = "touch /usr/codeexec-probe 2>&1 && echo written";

        assertThat(hardened.execAs("0", probe).stdout()).as("even as uid 0")
                .contains("Read-only file system").doesNotContain("written");

        try (PodmanKubePlay control = PodmanKubePlay.play(variant(p -> container(p).getSecurityContext()
                .setReadOnlyRootFilesystem(null)))) {
            assertThat(control.execAs("0", probe).stdout()).as("control: without readOnlyRootFilesystem")
                    .contains("written");
        }
    }

    @Test
    void should_let_the_pods_user_write_its_volumes_when_the_root_is_read_only() {
        PodmanKubePlay.Result r = hardened.exec("set -e; mkdir -p " + PodLayout.ROOT + " " + PodLayout.CONTROL
                + "; echo hi > " + PodLayout.ROOT + "/f; echo hi > " + PodLayout.TMP + "/f; stat -c %u "
                + PodLayout.ROOT + "/f; touch /home/x 2>&1 || true");

        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).startsWith(uid() + "\n").contains("/home/x").contains("Read-only file system");
    }

    @Test
    void should_not_raise_privileges_through_a_setuid_binary_when_escalation_is_not_allowed() {
        // su is setuid root in the image; it waits for a password on the FIFO while the probe reads its ids.
        String probe = "mkfifo /tmp/pw; /usr/bin/su root -c true </tmp/pw >/dev/null 2>&1 & p=$!; "
                + "exec 3>/tmp/pw; i=0; "
                + "while [ \"$(sed -n 's/^Name:\\t//p' /proc/$p/status)\" != su ] && [ $i -lt 600 ]; do "
                + "sleep 0.1; i=$((i+1)); done; "
                + "grep '^Uid:' /proc/$p/status; grep '^NoNewPrivs:' /proc/self/status; "
                + "exec 3>&-; wait $p; rm -f /tmp/pw; "
                + "python3 -c 'import os\ntry:\n os.setuid(0)\nexcept OSError as e:\n print(\"setuid\", e.errno)'";
        String uid = uid();

        assertThat(hardened.exec(probe).stdout()).contains("Uid:\t" + uid + "\t" + uid + "\t" + uid + "\t" + uid)
                .contains("NoNewPrivs:\t1").contains("setuid 1");

        try (PodmanKubePlay control = PodmanKubePlay.play(variant(p -> container(p).getSecurityContext()
                .setAllowPrivilegeEscalation(true)))) {
            assertThat(control.exec(probe).stdout()).as("control: with allowPrivilegeEscalation")
                    .contains("Uid:\t" + uid + "\t0\t0\t0").contains("NoNewPrivs:\t0");
        }
    }

    @Test
    void should_run_as_the_pods_uid_and_not_as_root() {
        String probe = "id -u; id -g";

        assertThat(hardened.exec(probe).stdout().lines().toList()).containsExactly(uid(), uid());

        // runAsNonRoot stays in the control: podman ignores it, which is why the library sets runAsUser itself.
        try (PodmanKubePlay control = PodmanKubePlay.play(variant(p -> {
            p.getSpec().getSecurityContext().setRunAsUser(null);
            p.getSpec().getSecurityContext().setRunAsGroup(null);
            container(p).getSecurityContext().setRunAsUser(null);
            container(p).getSecurityContext().setRunAsGroup(null);
        }))) {
            assertThat(control.pod().getSpec().getSecurityContext().getRunAsNonRoot()).isTrue();
            assertThat(control.exec(probe).stdout().lines().toList()).as("control: without runAsUser")
                    .containsExactly("0", "0");
        }
    }

    @Test
    void should_kill_a_program_allocating_past_the_memory_limit() {
        long limit = limit("memory").getNumericalAmount().longValueExact();
        // Bounded: twice the limit, touched page by page.
        String hog = "python3 -c \"b = bytearray(" + (2 * limit) + "); b[::4096] = b'x' * len(b[::4096]); "
                + "print('survived')\"";

        PodmanKubePlay.Result r = hardened.exec(hog);
        assertThat(r.exitCode()).isEqualTo(137);
        assertThat(r.stdout()).doesNotContain("survived");
        assertThat(hardened.exec("cat /sys/fs/cgroup/memory.max 2>/dev/null "
                + "|| cat /sys/fs/cgroup/memory/memory.limit_in_bytes").stdout().strip())
                .isEqualTo(Long.toString(limit));
        assertThat(hardened.exec("echo still-here").stdout()).as("the pod lives on").isEqualTo("still-here\n");

        try (PodmanKubePlay control = PodmanKubePlay.play(variant(p -> container(p).getResources().getLimits()
                .remove("memory")))) {
            assertThat(control.exec(hog).stdout()).as("control: without the memory limit").contains("survived");
        }
    }

    @Test
    void should_put_the_cpu_limit_in_the_cgroup() {
        String probe = "cat /sys/fs/cgroup/cpu.max 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us";
        long quota = limit("cpu").getNumericalAmount().multiply(BigDecimal.valueOf(100_000)).longValueExact();

        assertThat(hardened.exec(probe).stdout().strip()).isIn(Long.toString(quota), quota + " 100000");

        try (PodmanKubePlay control = PodmanKubePlay.play(variant(p -> container(p).getResources().getLimits()
                .remove("cpu")))) {
            assertThat(control.exec(probe).stdout().strip()).as("control: without the cpu limit")
                    .isIn("-1", "max 100000");
        }
    }

    @Test
    void should_keep_its_first_process_when_a_run_signals_it() {
        // The same signals reach an ordinary process of the pod (the control): only PID 1 shrugs them off.
        PodmanKubePlay.Result r = hardened.exec("kill -TERM 1; kill -KILL 1; sleep 60 & s=$!; kill -KILL $s; "
                + "wait $s; echo \"sleep $?\"; tr '\\0' ' ' </proc/1/cmdline");

        assertThat(r.stdout()).contains("sleep 137").contains("while :");
        assertThat(hardened.exec("echo still-here").stdout()).isEqualTo("still-here\n");
    }

    @Test
    void should_mount_no_service_account_token() {
        // No positive control is possible under podman: it mounts no token either way. The field is checked too.
        assertThat(hardened.pod().getSpec().getAutomountServiceAccountToken()).isFalse();
        assertThat(hardened.exec("ls /var/run/secrets/kubernetes.io/serviceaccount 2>&1; echo done").stdout())
                .contains("No such file").doesNotContain("token");
    }

    @Test
    void should_see_no_interface_but_loopback_when_played_without_a_network() {
        String probe = "ls /sys/class/net";
        String connect = "import socket\n"
                + "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1)\n"
                + "socket.create_connection(srv.getsockname(), timeout=5); print('loopback ok')\n"
                + "try:\n"
                + "    socket.create_connection(('10.0.0.1', 80), timeout=5); print('reached')\n"
                + "except OSError as e:\n"
                + "    print('refused', e.errno)\n";

        assertThat(hardened.exec(probe).stdout().lines().toList()).containsExactly("lo");
        PodmanKubePlay.Result r = hardened.exec("python3 -c \"$0\"", connect);
        assertThat(r.stdout()).contains("loopback ok").contains("refused").doesNotContain("reached");

        try (PodmanKubePlay control = PodmanKubePlay.play(generated(), "bridge")) {
            assertThat(control.exec(probe).stdout().lines().toList()).as("control: on podman's bridge network")
                    .contains("lo").hasSizeGreaterThan(1);
        }
    }

    /**
     * The pod under test: the library's generated workspace pod, from a template with every hardening default and a
     * small memory limit (the hog allocates twice the limit). The engine's labels are those of a real workspace.
     */
    static Pod generated() {
        PodTemplate template = PodTemplate.builder().image("python:3.12-slim").memory("128Mi", "256Mi")
                .cpu("250m", "500m").build();
        String name = "codeexec-spec-" + UUID.randomUUID().toString().substring(0, 8);
        return PodSpecs.workspacePod(template, name, PodLabels.of("spec-play", name, System.currentTimeMillis()),
                List.of());
    }

    /** The generated pod with one change: a positive control. */
    private static Pod variant(Consumer<Pod> change) {
        Pod pod = new PodBuilder(generated()).build();
        change.accept(pod);
        return pod;
    }

    private static Container container(Pod pod) {
        return pod.getSpec().getContainers().stream().filter(c -> c.getName().equals(PodLayout.CONTAINER))
                .findFirst().orElseThrow();
    }

    private static String uid() {
        Long uid = container(hardened.pod()).getSecurityContext() == null ? null
                : container(hardened.pod()).getSecurityContext().getRunAsUser();
        return Long.toString(uid != null ? uid : hardened.pod().getSpec().getSecurityContext().getRunAsUser());
    }

    private static Quantity limit(String resource) {
        Map<String, Quantity> limits = container(hardened.pod()).getResources().getLimits();
        assertThat(limits).containsKey(resource);
        return limits.get(resource);
    }
}
