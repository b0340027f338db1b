package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The seccomp filter of a bubblewrap sandbox: a classic BPF program in the format bubblewrap's {@code --seccomp FD}
 * reads (the {@code seccomp_export_bpf} format: 8-byte {@code sock_filter} entries, native byte order).
 *
 * <p>Always refused with {@code EPERM}: {@code ptrace} and {@code process_vm_readv/writev}; the mount family
 * ({@code mount}, {@code umount2}, {@code pivot_root}, {@code open_tree}, {@code move_mount}, {@code fsopen},
 * {@code fsconfig}, {@code fsmount}, {@code fspick}, {@code mount_setattr}); {@code unshare}, {@code setns} and
 * {@code clone} with any {@code CLONE_NEW*} flag (new namespaces); the kernel keyring ({@code keyctl},
 * {@code add_key}, {@code request_key}); {@code bpf}; {@code perf_event_open}; {@code userfaultfd};
 * {@code io_uring_setup/enter/register} (io_uring performs socket and file operations this filter could not see);
 * {@code open_by_handle_at}/{@code name_to_handle_at}; {@code ioctl(TIOCSTI)} and {@code ioctl(TIOCLINUX)} (terminal
 * input injection). {@code clone3} fails with {@code ENOSYS} because its flags sit in memory a filter cannot read;
 * C libraries then fall back to {@code clone}, whose flags are checked. System calls of any other architecture (the
 * 32-bit and x32 ABIs) are refused.
 *
 * <p>With a {@link NetworkMode#RESTRICTED restricted network} also: {@code socket(AF_UNIX)},
 * {@code socket(AF_VSOCK)} and {@code socketpair(AF_UNIX, SOCK_DGRAM)}. A datagram socket pair can still
 * {@code sendto} any named socket, so it is refused; stream and seqpacket pairs are connected for life and stay
 * allowed ({@code asyncio} needs them).
 *
 * <p>Everything else is allowed: this filter removes kernel attack surface and host channels; the namespaces, the
 * mount layout and {@code --cap-drop ALL} do the rest.
 */
final class SeccompProgram {

    static final int RET_ALLOW = 0x7fff0000;
    static final int RET_ERRNO = 0x00050000;
    static final int EPERM = 1;
    static final int ENOSYS = 38;

    static final int AF_UNIX = 1;
    static final int AF_VSOCK = 40;
    static final int SOCK_DGRAM = 2;
    static final int SOCK_TYPE_MASK = 0xf;
    static final int TIOCSTI = 0x5412;
    static final int TIOCLINUX = 0x541c;
    /** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME. */
    static final int CLONE_NEW_MASK = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000
            | 0x20000000 | 0x40000000 | 0x00000080;

    // struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
    private static final int OFF_NR = 0;
    private static final int OFF_ARCH = 4;
    private static final int OFF_ARG0_LO = 16;
    private static final int OFF_ARG1_LO = 24;

    // BPF opcodes
    private static final int BPF_LD_W_ABS = 0x20;
    private static final int BPF_JEQ_K = 0x15;
    private static final int BPF_JGE_K = 0x35;
    private static final int BPF_JSET_K = 0x45;
    private static final int BPF_ALU_AND_K = 0x54;
    private static final int BPF_RET_K = 0x06;

    /** A supported CPU architecture: its audit constant and system call numbers. */
    enum Arch {
        X86_64(0xC000003E, true, Map.ofEntries(
                Map.entry("socket", 41), Map.entry("socketpair", 53), Map.entry("ioctl", 16),
                Map.entry("clone", 56), Map.entry("clone3", 435), Map.entry("ptrace", 101),
                Map.entry("process_vm_readv", 310), Map.entry("process_vm_writev", 311),
                Map.entry("mount", 165), Map.entry("umount2", 166), Map.entry("pivot_root", 155),
                Map.entry("unshare", 272), Map.entry("setns", 308), Map.entry("keyctl", 250),
                Map.entry("add_key", 248), Map.entry("request_key", 249), Map.entry("bpf", 321),
                Map.entry("perf_event_open", 298), Map.entry("userfaultfd", 323),
                Map.entry("name_to_handle_at", 303), Map.entry("open_by_handle_at", 304))),
        AARCH64(0xC00000B7, false, Map.ofEntries(
                Map.entry("socket", 198), Map.entry("socketpair", 199), Map.entry("ioctl", 29),
                Map.entry("clone", 220), Map.entry("clone3", 435), Map.entry("ptrace", 117),
                Map.entry("process_vm_readv", 270), Map.entry("process_vm_writev", 271),
                Map.entry("mount", 40), Map.entry("umount2", 39), Map.entry("pivot_root", 41),
                Map.entry("unshare", 97), Map.entry("setns", 268), Map.entry("keyctl", 219),
                Map.entry("add_key", 217), Map.entry("request_key", 218), Map.entry("bpf", 280),
                Map.entry("perf_event_open", 241), Map.entry("userfaultfd", 282),
                Map.entry("name_to_handle_at", 264), Map.entry("open_by_handle_at", 265)));

        final int auditArch;
        /** x86_64 also accepts x32 calls (nr | 0x40000000) under the same audit arch; they are refused. */
        final boolean hasX32;
        private final Map<String, Integer> numbers;

        Arch(int auditArch, boolean hasX32, Map<String, Integer> own) {
            this.auditArch = auditArch;
            this.hasX32 = hasX32;
            Map<String, Integer> all = new HashMap<>(own);
            all.putAll(COMMON_NUMBERS);
            this.numbers = Map.copyOf(all);
        }

        int nr(String name) {
            Integer n = numbers.get(name);
            if (n == null) {
                throw new IllegalArgumentException("no number for " + name + " on " + this);
            }
            return n;
        }

        /** The architecture of this JVM, or an error saying that no filter exists for it. */
        static Arch current() {
            String a = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
            switch (a) {
                case "amd64":
                case "x86_64":
                    return X86_64;
                case "aarch64":
                case "arm64":
                    return AARCH64;
                default:
                    throw new BackendUnavailableException("the sandbox's seccomp filter supports x86_64 and aarch64, "
                            + "not '" + a + "'; refusing to run without it");
            }
        }
    }

    /** Calls numbered alike on every 64-bit architecture (the generic table). */
    static final Map<String, Integer> COMMON_NUMBERS = Map.of(
            "io_uring_setup", 425, "io_uring_enter", 426, "io_uring_register", 427, "open_tree", 428,
            "move_mount", 429, "fsopen", 430, "fsconfig", 431, "fsmount", 432, "fspick", 433,
            "mount_setattr", 442);

    /** System calls refused with EPERM in every mode. */
    static final List<String> ALWAYS_DENIED = List.of(
            "ptrace", "process_vm_readv", "process_vm_writev",
            "mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
            "mount_setattr", "unshare", "setns", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
            "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "name_to_handle_at",
            "open_by_handle_at");

    private SeccompProgram() {
    }

    /** The serialised program for this JVM's architecture. */
    static byte[] build(NetworkMode network) {
        return serialize(instructions(Arch.current(), network));
    }

    static byte[] serialize(List<long[]> program) {
        ByteBuffer buf = ByteBuffer.allocate(program.size() * 8).order(ByteOrder.nativeOrder());
        for (long[] insn : program) {
            buf.putShort((short) insn[0]);
            buf.put((byte) insn[1]);
            buf.put((byte) insn[2]);
            buf.putInt((int) insn[3]);
        }
        return buf.array();
    }

    /** The program as {code, jt, jf, k} tuples. */
    static List<long[]> instructions(Arch arch, NetworkMode network) {
        Assembler as = new Assembler();
        as.ld(OFF_ARCH);
        as.jeq(arch.auditArch, null, "deny");
        as.ld(OFF_NR);
        if (arch.hasX32) {
            as.jge(0x40000000, "deny", null);
        }
        for (String name : ALWAYS_DENIED) {
            as.jeq(arch.nr(name), "deny", null);
        }
        as.jeq(arch.nr("clone3"), "enosys", null);
        as.jeq(arch.nr("clone"), "clone", null);
        as.jeq(arch.nr("ioctl"), "ioctl", null);
        if (network == NetworkMode.RESTRICTED) {
            as.jeq(arch.nr("socket"), "socket", null);
            as.jeq(arch.nr("socketpair"), "socketpair", null);
        }
        as.ret(RET_ALLOW);

        as.label("clone");
        as.ld(OFF_ARG0_LO);
        as.jset(CLONE_NEW_MASK, "deny", null);
        as.ret(RET_ALLOW);

        as.label("ioctl");
        as.ld(OFF_ARG1_LO); // the kernel truncates the request to 32 bits
        as.jeq(TIOCSTI, "deny", null);
        as.jeq(TIOCLINUX, "deny", null);
        as.ret(RET_ALLOW);

        if (network == NetworkMode.RESTRICTED) {
            as.label("socket");
            as.ld(OFF_ARG0_LO);
            as.jeq(AF_UNIX, "deny", null);
            as.jeq(AF_VSOCK, "deny", null);
            as.ret(RET_ALLOW);

            as.label("socketpair");
            as.ld(OFF_ARG0_LO);
            as.jeq(AF_VSOCK, "deny", null);
            as.jeq(AF_UNIX, null, "allow");
            as.ld(OFF_ARG1_LO);
            as.and(SOCK_TYPE_MASK);
            as.jeq(SOCK_DGRAM, "deny", null);
            as.label("allow");
            as.ret(RET_ALLOW);
        }

        as.label("enosys");
        as.ret(RET_ERRNO | ENOSYS);
        as.label("deny");
        as.ret(RET_ERRNO | EPERM);
        return as.assemble();
    }

    /** A two-pass assembler: conditional jumps name labels; null means "fall through". */
    private static final class Assembler {
        private final List<Object[]> insns = new ArrayList<>();
        private final Map<String, Integer> labels = new HashMap<>();

        void ld(int offset) {
            insns.add(new Object[]{BPF_LD_W_ABS, null, null, offset});
        }

        void jeq(int k, String jt, String jf) {
            insns.add(new Object[]{BPF_JEQ_K, jt, jf, k});
        }

        void jge(int k, String jt, String jf) {
            insns.add(new Object[]{BPF_JGE_K, jt, jf, k});
        }

        void jset(int k, String jt, String jf) {
            insns.add(new Object[]{BPF_JSET_K, jt, jf, k});
        }

        void and(int k) {
            insns.add(new Object[]{BPF_ALU_AND_K, null, null, k});
        }

        void ret(int k) {
            insns.add(new Object[]{BPF_RET_K, null, null, k});
        }

        void label(String name) {
            labels.put(name, insns.size());
        }

        List<long[]> assemble() {
            List<long[]> out = new ArrayList<>();
            for (int i = 0; i < insns.size(); i++) {
                Object[] in = insns.get(i);
                int code = (Integer) in[0];
                long jt = offset(i, (String) in[1]);
                long jf = offset(i, (String) in[2]);
                out.add(new long[]{code, jt, jf, ((Integer) in[3]) & 0xffffffffL});
            }
            return out;
        }

        private long offset(int from, String label) {
            if (label == null) {
                return 0;
            }
            Integer to = labels.get(label);
            if (to == null) {
                throw new IllegalStateException("undefined label " + label);
            }
            int off = to - from - 1;
            if (off < 0 || off > 255) {
                throw new IllegalStateException("jump to " + label + " out of range: " + off);
            }
            return off;
        }
    }
}
