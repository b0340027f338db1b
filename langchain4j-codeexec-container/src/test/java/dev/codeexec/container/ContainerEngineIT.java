package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.dockerjava.api.command.InspectContainerResponse;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.WorkspacePolicy;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What only a container backend can show: its hardening, limits in force, kills inside the container, no leftovers. */
class ContainerEngineIT {

    private static final long MEMORY = 64L << 20;
    private static final int PROCESSES = 48;

    private static ContainerEngine engine;
    private static Workspace ws;

    @BeforeAll
    static void startEngine() {
        ContainerTesting.requireDocker();
        engine = ContainerTesting.engine().memoryBytes(MEMORY).processes(PROCESSES).build();
        ws = engine.manager().createWorkspace("it", WorkspacePolicy.DEFAULT);
    }

    @AfterAll
    static void closeEngineAndCheckNothingIsLeft() {
        if (engine != null) {
            String id = engine.instanceId();
            engine.close();
            assertThat(ContainerTesting.containersOf(id)).as("labelled containers left after close").isEmpty();
        }
    }

    private static RunResult sh(String script) {
        return sh(script, Duration.ofSeconds(60));
    }

    private static RunResult sh(String script, Duration timeout) {
        return engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c", script).timeout(timeout)
                .build());
    }

    /** Command lines of the container's processes other than PID 1 and the looking exec itself. */
    private static List<String> processesInContainer() {
        Execs.Result r = Execs.run(engine.docker(), engine.containerId(ws), "0:0", List.of("sh", "-c",
                "for p in /proc/[0-9]*; do n=${p#/proc/}; [ \"$n\" = 1 ] || [ \"$n\" = $$ ] && continue; "
                        + "c=$(tr '\\0\\n' '  ' <\"$p/cmdline\" 2>/dev/null); s=$(sed -n 's/^State:\\s*//p' "
                        + "\"$p/status\" 2>/dev/null); [ -n \"$c\" ] && echo \"$s|$c\"; done; true"));
        return Arrays.stream(r.stdout().split("\n")).filter(l -> !l.isBlank())
                // The looking shell's own children (tr, sed) and PID 1's sleep are not a run's.
                .filter(l -> !l.contains("|tr ") && !l.contains("|sed ") && !l.contains("|sleep 3600"))
                .toList();
    }

    @Test
    void should_declare_container_isolation_and_every_limit_it_enforces() {
        assertThat(engine.describe().isolation()).isEqualTo(Isolation.CONTAINER);
        assertThat(engine.describe().networkAllowed()).isFalse();
        assertThat(engine.describe().supportsCleanEnv()).isTrue();
        assertThat(engine.describe().interactive()).isTrue();
        assertThat(engine.describe().enforcedLimits()).containsExactlyInAnyOrder(ResourceLimit.values());
    }

    @Test
    void should_run_without_capabilities_network_or_docker_socket() {
        InspectContainerResponse c = engine.docker().control().inspectContainerCmd(engine.containerId(ws)).exec();
        assertThat(c.getHostConfig().getNetworkMode()).isEqualTo("none");
        assertThat(c.getHostConfig().getPrivileged()).isFalse();
        assertThat(c.getMounts()).allSatisfy(m -> assertThat(String.valueOf(m.getSource())).doesNotContain("docker.sock"));

        RunResult r = sh("grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status; ls /sys/class/net; id -u; "
                + "ls /var/run/docker.sock /run/docker.sock 2>&1 | grep -c 'No such file'");

        assertThat(r.exitCode()).isZero();
        assertThat(r.stdout()).contains("CapEff:\t0000000000000000").contains("CapBnd:\t0000000000000000")
                .contains("NoNewPrivs:\t1");
        assertThat(r.stdout().lines().filter(l -> !l.contains(":")).toList()).as("interfaces, uid, sockets found")
                .containsExactly("lo", Integer.toString(ContainerEngine.DEFAULT_UID), "2");
    }

    @Test
    void should_reach_no_network_but_its_own_loopback() {
        String program = "import socket\n"
                + "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1)\n"
                + "c = socket.create_connection(srv.getsockname(), timeout=5); print('loopback ok')\n"
                + "for host in ['172.17.0.1', '10.0.0.1', '1.1.1.1']:\n"
                + "    try:\n"
                + "        socket.create_connection((host, 80), timeout=5); print('reached', host)\n"
                + "    except OSError as e:\n"
                + "        print('refused', host, e.errno)\n";
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("python3").args("-c", program).build());

        assertThat(r.exitCode()).isZero();
        assertThat(r.stdout()).contains("loopback ok").doesNotContain("reached")
                .contains("refused 172.17.0.1").contains("refused 10.0.0.1").contains("refused 1.1.1.1");
    }

    @Test
    void should_stop_a_memory_hog_at_the_limit_and_say_it_ran_out_of_memory() {
        RunResult limit = sh("cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes");
        assertThat(limit.stdout().strip()).as("the limit in force").isEqualTo(Long.toString(MEMORY));

        // Bounded: the hog asks for 4x the limit, no more, and the run has a timeout.
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("python3")
                .args("-c", "b = bytearray(" + (4 * MEMORY) + "); b[::4096] = b'x' * len(b[::4096]); print('survived')")
                .timeout(Duration.ofSeconds(60)).build());

        assertThat(r.timedOut()).isFalse();
        assertThat(r.exitCode()).isEqualTo(137);
        assertThat(r.stdout()).doesNotContain("survived");
        assertThat(r.stderr()).contains("killed: out of memory");
        assertThat(sh("echo still-here").stdout()).as("the workspace lives on").isEqualTo("still-here\n");
    }

    @Test
    void should_hold_a_process_flood_at_the_pids_limit_and_clear_it_afterwards() {
        RunResult limit = sh("cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max");
        assertThat(limit.stdout().strip()).as("the limit in force").isEqualTo(Integer.toString(PROCESSES));

        // Forks until fork fails (each child becomes a small sleep), says how many it got, and keeps them alive.
        String flood = "import os, time\n"
                + "n = 0\n"
                + "try:\n"
                + "    while n < 1000:\n"
                + "        if os.fork() == 0:\n"
                + "            os.execv('/bin/sleep', ['sleep', '600'])\n"
                + "        n += 1\n"
                + "except OSError as e:\n"
                + "    print('fork failed', e.errno, flush=True)\n"
                + "print('started', n, flush=True)\n"
                + "time.sleep(600)\n";
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("python3").args("-c", flood)
                .timeout(Duration.ofSeconds(20)).build());

        assertThat(r.timedOut()).isTrue();
        assertThat(r.stdout()).contains("fork failed 11");
        int started = Integer.parseInt(r.stdout().replaceAll("(?s).*started (\\d+).*", "$1"));
        assertThat(started).isLessThan(PROCESSES).isGreaterThan(PROCESSES / 2);
        assertThat(processesInContainer()).as("processes left after the kill").isEmpty();
        assertThat(sh("echo next").stdout()).isEqualTo("next\n");
    }

    @Test
    void should_leave_nothing_in_the_container_after_a_timeout_with_detached_children() {
        RunResult r = sh("setsid sleep 3001 & (setsid sleep 3002 &); nohup sleep 3003 >/dev/null 2>&1 & "
                + "echo up; sleep 3004", Duration.ofSeconds(2));

        assertThat(r.timedOut()).isTrue();
        assertThat(r.stdout()).isEqualTo("up\n");
        assertThat(processesInContainer()).as("processes left after the timeout").isEmpty();
        assertThat(sh("grep -c Z /proc/[0-9]*/stat 2>/dev/null | grep -vc ':0$'").stdout().strip())
                .as("zombies").isEqualTo("0");
    }

    @Test
    void should_kill_leftovers_when_the_program_exits_so_the_next_run_is_not_delayed() {
        RunResult r = sh("setsid sleep 3011 & echo done");

        assertThat(r.exitCode()).isZero();
        assertThat(processesInContainer()).as("processes left after the run").isEmpty();
    }

    @Test
    void should_kill_a_timed_out_run_and_spare_a_session_of_the_same_workspace() {
        try (dev.codeexec.engine.ProgramSession session = engine.interactive().orElseThrow().startProgram(ws,
                RunProgramSpec.builder("cat").timeout(Duration.ofMinutes(2)).build())) {
            RunResult r = sh("setsid sleep 3021 & sleep 3022", Duration.ofSeconds(1));

            assertThat(r.timedOut()).isTrue();
            List<String> left = processesInContainer();
            assertThat(left).as("the timed-out run's processes").noneMatch(p -> p.contains("sleep 302"));
            assertThat(left).as("the session's program").anyMatch(p -> p.endsWith("|cat "));
            session.write("still here", true);
            dev.codeexec.engine.ProgramPoll p = session.await(Duration.ofMillis(100), 0, 1000);
            for (int i = 0; i < 600 && !p.output().contains("still here"); i++) {
                p = session.await(Duration.ofMillis(100), 0, 1000);
            }
            assertThat(p.output()).isEqualTo("still here\n");
        }
        assertThat(processesInContainer()).as("after the session closed").isEmpty();
    }

    @Test
    void should_give_the_program_exactly_the_run_environment() {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("/usr/bin/env").cleanEnv(true)
                .env(Map.of("ONLY", "this")).build());

        assertThat(r.exitCode()).isZero();
        assertThat(r.stdout().lines().map(l -> l.substring(0, l.indexOf('='))).toList())
                .containsExactlyInAnyOrder("HOME", "LANG", "ONLY", "OUTPUT_DIR", "PATH", "RUN_DIR", "SKILLS_DIR",
                        "TEMP", "TMP", "TMPDIR", "WORKSPACE_DIR", "WORK_DIR");
    }

    @Test
    void should_feed_a_large_stdin_to_its_end() {
        String input = "x".repeat(1 << 20);
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("wc").args("-c").stdin(input).build());

        assertThat(r.exitCode()).isZero();
        assertThat(r.stdout().strip()).isEqualTo(Integer.toString(1 << 20));
    }

    @Test
    void should_enforce_per_run_rlimits() {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c",
                        "ulimit -n; ulimit -t; head -c 100000 /dev/zero > work/big 2>/dev/null; echo rc=$?")
                .limits(dev.codeexec.engine.ResourceLimits.builder().maxOpenFiles(50).cpuTime(Duration.ofSeconds(7))
                        .maxFileBytes(4096).build()).build());

        assertThat(r.stdout()).startsWith("50\n7\n").doesNotContain("rc=0");
    }

    @Test
    void should_report_a_missing_engine_as_unavailable_fast_and_cached() {
        assertThatThrownBy(() -> ContainerEngine.builder().image(ContainerTesting.IMAGE)
                .dockerHost("unix:///nonexistent/docker.sock").build())
                .isInstanceOf(BackendUnavailableException.class).hasMessageContaining("Docker is not reachable at unix:///nonexistent/docker.sock "
                        + "(set by ContainerEngine.Builder.dockerHost)");
    }

    @Test
    void should_remove_the_container_on_cleanup() {
        Workspace other = engine.manager().createWorkspace("gone", WorkspacePolicy.DEFAULT);
        String id = engine.containerId(other);

        engine.manager().cleanup(other);

        assertThat(ContainerTesting.containersOf(engine.instanceId())).noneMatch(c -> c.getId().equals(id));
        assertThatThrownBy(() -> engine.runner().runProgram(other, RunProgramSpec.builder("true").build()))
                .isInstanceOf(WorkspaceGoneException.class);
    }
}
