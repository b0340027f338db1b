package dev.codeexec.sandbox;

import static dev.codeexec.sandbox.SandboxTesting.python;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attacks on the kernel interface from inside the default sandbox: mount, umount (to reveal what a mask hides),
 * remount read-write, nested namespaces, ptrace, terminal injection. Each is paired with a control showing the
 * sandbox still works and the protection held.
 */
class SandboxKernelIT extends AbstractSandboxIT {


    @Test
    void should_refuse_mount_umount_and_remount() {
        RunResult r = python(engine, ws, SandboxTesting.TRY
                + "print('mount', c('mount', b'none', b'/mnt', b'tmpfs', 0, None))\n"
                + "print('umount-mask', c('umount2', b'/etc/shadow', 2))\n"
                + "print('umount-root', c('umount2', b'/root', 2))\n"
                + "print('remount', c('mount', None, b'/', None, 0x20 | 0x1000, None))\n"  // MS_REMOUNT|MS_BIND
                + "print('unshare-user', c('unshare', 0x10000000))\n"
                + "print('unshare-mnt', c('unshare', 0x00020000))\n"
                + "print('setns', c('setns', 0, 0))\n"
                + "print('write-root', attempt(lambda: open('/codeexec-it', 'w')))\n"
                + "print('caps', [l for l in open('/proc/self/status') if l.startswith('CapEff')][0].split()[1])\n"
                + "print('alive')\n");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("mount EPERM").contains("umount-mask EPERM").contains("umount-root EPERM")
                .contains("remount EPERM").contains("unshare-user EPERM").contains("unshare-mnt EPERM")
                .contains("setns EPERM");
        // Controls: the root is still read-only after the attempts, no capability is left, the program runs on.
        assertThat(r.stdout()).contains("write-root EROFS").contains("caps 0000000000000000").contains("alive");
    }

    @Test
    void should_refuse_nested_user_namespace_from_a_shell_tool() {
        RunResult r = SandboxTesting.sh(engine, ws, "unshare -r true; echo rc=$?; echo after");
        assertThat(r.stdout()).doesNotContain("rc=0").contains("after");
    }

    @Test
    void should_refuse_ptrace_of_a_sibling_process() {
        RunResult r = python(engine, ws, SandboxTesting.TRY
                + "import subprocess, time\n"
                + "p = subprocess.Popen(['sleep', '30'])\n"
                + "print('attach', c('ptrace', 16, p.pid, 0, 0))\n"   // PTRACE_ATTACH
                + "print('vm-read', c('process_vm_readv', p.pid, 0, 0, 0, 0, 0))\n"
                + "p.kill(); p.wait()\n"
                + "print('child-ran', p.returncode is not None)\n");
        assertThat(r.stdout()).contains("attach EPERM").contains("vm-read EPERM").contains("child-ran True");
    }

    @Test
    void should_make_terminal_injection_impossible() {
        // The program gives itself a terminal as its controlling terminal, the precondition of TIOCSTI.
        RunResult r = python(engine, ws, SandboxTesting.TRY
                + "import fcntl, termios, pty\n"
                + "master, slave = os.openpty()\n"
                + "pid = os.fork()\n"
                + "if pid == 0:\n"
                + "    os.setsid()\n"
                + "    ctty = c('ioctl', slave, termios.TIOCSCTTY, 0)\n"
                + "    sti = c('ioctl', slave, termios.TIOCSTI, ctypes.c_char_p(b'x'))\n"
                + "    w = attempt(lambda: os.write(slave, b'written\\n'))\n"
                + "    print('ctty', ctty, 'tiocsti', sti, 'write', w, flush=True)\n"
                + "    os._exit(0)\n"
                + "os.waitpid(pid, 0)\n"
                + "print('master-read', os.read(master, 100))\n");
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("tiocsti EPERM");
        // Controls: the terminal was really the controlling one and writable.
        assertThat(r.stdout()).contains("ctty ok").contains("write ok").contains("written");
    }

    @Test
    void should_refuse_io_uring_bpf_keyring_and_perf() {
        RunResult r = python(engine, ws, SandboxTesting.TRY
                + "params = ctypes.create_string_buffer(120)\n"
                + "print('io_uring', c('syscall', 425, 4, params))\n"
                + "print('bpf', c('syscall', 321, 0, 0, 0))\n"
                + "print('keyctl', c('syscall', 250, 0, -3, 0))\n"
                + "print('perf', c('syscall', 298, 0, 0, -1, -1, 0))\n"
                + "print('userfaultfd', c('syscall', 323, 1))\n"
                + "print('clone3', c('syscall', 435, 0, 0))\n"
                + "import threading, subprocess\n"
                + "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
                + "print('threads-and-processes', subprocess.run(['true']).returncode)\n");
        assertThat(r.stdout()).contains("io_uring EPERM").contains("bpf EPERM").contains("keyctl EPERM")
                .contains("perf EPERM").contains("userfaultfd EPERM").contains("clone3 ENOSYS");
        assertThat(r.stdout()).contains("threads-and-processes 0");
    }
}
