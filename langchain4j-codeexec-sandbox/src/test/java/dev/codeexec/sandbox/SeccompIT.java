package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Proves each rule of the seccomp program by itself: the same probe runs in a bubblewrap sandbox that keeps its
 * capabilities (so nothing else stands in the way), once without the filter (the control: the call is not refused
 * with EPERM) and once with it (refused with EPERM, clone3 with ENOSYS).
 */
class SeccompIT {

    @TempDir
    Path tmp;

    /** Each probe runs in a forked child so one call's effect (a new namespace) cannot influence the next. */
    private static final String PROBE = String.join("\n",
            "import ctypes, errno, os, socket, fcntl, termios",
            "libc = ctypes.CDLL(None, use_errno=True)",
            "def res(r):",
            "    return 'ok' if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))",
            "def sc(*a):",
            "    return res(libc.syscall(*a))",
            "def sock(fam, typ):",
            "    try:",
            "        socket.socket(fam, typ).close(); return 'ok'",
            "    except OSError as e:",
            "        return errno.errorcode.get(e.errno)",
            "def pair(typ):",
            "    try:",
            "        socket.socketpair(socket.AF_UNIX, typ); return 'ok'",
            "    except OSError as e:",
            "        return errno.errorcode.get(e.errno)",
            "def tiocsti():",
            "    m, s = os.openpty()",
            "    os.setsid()",
            "    libc.ioctl(s, termios.TIOCSCTTY, 0)",
            "    return res(libc.ioctl(s, termios.TIOCSTI, ctypes.c_char_p(b'x')))",
            "def clone_newuts():",
            "    r = libc.syscall(56, 0x04000000 | 17, 0, 0, 0, 0)",
            "    if r == 0:",
            "        os._exit(0)",
            "    if r > 0:",
            "        os.waitpid(r, 0)",
            "    return res(r)",
            "def mount_umount():",
            "    r = res(libc.mount(b'none', b'/mnt', b'tmpfs', 0, None))",
            "    return r",
            "probes = {",
            "  'mount': mount_umount,",
            "  'umount2': lambda: res(libc.umount2(b'/proc', 2)),",
            "  'unshare': lambda: res(libc.unshare(0x10000000)),",
            "  'setns': lambda: res(libc.setns(-1, 0)),",
            "  'clone_newuts': clone_newuts,",
            "  'clone3': lambda: sc(435, 0, 0),",
            "  'ptrace': lambda: res(libc.ptrace(16, 999999, 0, 0)),",
            "  'process_vm_readv': lambda: sc(310, os.getpid(), 0, 0, 0, 0, 0),",
            "  'keyctl': lambda: sc(250, 0, -3, 0),",
            "  'add_key': lambda: sc(248, 0, 0, 0, 0, 0),",
            "  'bpf': lambda: sc(321, 0, 0, 0),",
            "  'perf_event_open': lambda: sc(298, 0, 0, -1, -1, 0),",
            "  'userfaultfd': lambda: sc(323, 1),",
            "  'io_uring_setup': lambda: sc(425, 4, ctypes.create_string_buffer(120)),",
            "  'fsopen': lambda: sc(430, b'tmpfs', 0),",
            "  'open_by_handle_at': lambda: sc(304, -1, 0, 0),",
            "  'tiocsti': tiocsti,",
            "  'socket_unix': lambda: sock(socket.AF_UNIX, socket.SOCK_STREAM),",
            "  'socket_inet': lambda: sock(socket.AF_INET, socket.SOCK_STREAM),",
            "  'socketpair_dgram': lambda: pair(socket.SOCK_DGRAM),",
            "  'socketpair_stream': lambda: pair(socket.SOCK_STREAM),",
            "}",
            "for name, fn in probes.items():",
            "    rd, wr = os.pipe()",
            "    pid = os.fork()",
            "    if pid == 0:",
            "        os.close(rd)",
            "        try:",
            "            out = fn()",
            "        except Exception as e:",
            "            out = 'exception:' + type(e).__name__",
            "        os.write(wr, out.encode()); os._exit(0)",
            "    os.close(wr)",
            "    out = os.read(rd, 100).decode(); os.close(rd); os.waitpid(pid, 0)",
            "    print(name, out or 'crashed')",
            "");

    @BeforeAll
    static void requireTools() {
        SandboxTesting.requireSandbox();
        Requirements.require(SeccompProgram.Arch.current() == SeccompProgram.Arch.X86_64,
                "an x86_64 host (the probe uses x86_64 system call numbers)");
    }

    @Test
    void should_refuse_each_listed_call_only_because_of_the_filter() throws Exception {
        assumeTrue(SandboxTesting.isRoot(), "the control needs a sandbox that keeps its capabilities (root)");
        Map<String, String> without = probe(null);
        Map<String, String> with = probe(NetworkMode.RESTRICTED);

        for (String call : List.of("mount", "umount2", "unshare", "setns", "clone_newuts", "ptrace",
                "process_vm_readv", "keyctl", "add_key", "bpf", "perf_event_open", "userfaultfd", "io_uring_setup",
                "fsopen", "open_by_handle_at", "tiocsti", "socket_unix", "socketpair_dgram")) {
            assertThat(without.get(call)).as("control: %s without the filter", call).isNotEqualTo("EPERM")
                    .isNotNull();
            assertThat(with.get(call)).as("%s with the filter", call).isEqualTo("EPERM");
        }
        assertThat(without.get("clone3")).isNotEqualTo("ENOSYS");
        assertThat(with.get("clone3")).isEqualTo("ENOSYS");
        // What the filter must leave alone.
        assertThat(with.get("socket_inet")).isEqualTo("ok");
        assertThat(with.get("socketpair_stream")).isEqualTo("ok");
    }

    @Test
    void should_allow_unix_sockets_but_keep_other_denials_when_network_enabled() throws Exception {
        Map<String, String> enabled = probe(NetworkMode.ENABLED);
        assertThat(enabled.get("socket_unix")).isEqualTo("ok");
        assertThat(enabled.get("socketpair_dgram")).isEqualTo("ok");
        assertThat(enabled.get("unshare")).isEqualTo("EPERM");
        assertThat(enabled.get("mount")).isEqualTo("EPERM");
        assertThat(enabled.get("tiocsti")).isEqualTo("EPERM");
        assertThat(enabled.get("io_uring_setup")).isEqualTo("EPERM");
    }

    @Test
    void should_kill_nothing_but_refuse_everything_when_architecture_does_not_match() throws Exception {
        // A filter for the wrong architecture refuses every call (the arch check is live): the probe cannot start.
        List<long[]> wrong = SeccompProgram.instructions(SeccompProgram.Arch.AARCH64, NetworkMode.RESTRICTED);
        Path f = tmp.resolve("wrong.bpf");
        Files.write(f, SeccompProgram.serialize(wrong));
        Process p = start(f, List.of("/bin/true"));
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isNotZero();
    }

    private Map<String, String> probe(NetworkMode mode) throws IOException, InterruptedException {
        Path file = null;
        if (mode != null) {
            file = tmp.resolve("filter-" + mode.id() + ".bpf");
            Files.write(file, SeccompProgram.build(mode));
        }
        Process p = start(file, List.of(SandboxTesting.PYTHON, "-c", PROBE));
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        Map<String, String> results = new HashMap<>();
        for (String line : out.split("\n")) {
            String[] kv = line.split(" ", 2);
            if (kv.length == 2) {
                results.put(kv[0], kv[1]);
            }
        }
        assertThat(results).as(out).containsKey("socketpair_stream");
        return results;
    }

    /** bubblewrap without --cap-drop (as root the sandbox keeps its capabilities) and, optionally, the filter. */
    private static Process start(Path filter, List<String> command) throws IOException {
        List<String> bwrap = new ArrayList<>(List.of(Requirements.requireCommand("bwrap"), "--unshare-user",
                "--unshare-pid", "--unshare-net", "--unshare-uts", "--die-with-parent", "--ro-bind", "/", "/",
                "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/mnt"));
        if (filter != null) {
            bwrap.add("--seccomp");
            bwrap.add("3");
        }
        bwrap.add("--");
        bwrap.addAll(command);
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c",
                "if [ -n \"$1\" ]; then exec 3<\"$1\"; fi; shift; exec \"$@\"", "sh",
                filter == null ? "" : filter.toString()));
        argv.addAll(bwrap);
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().put("PATH", "/usr/bin:/bin");
        return pb.start();
    }
}
