package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The filter evaluated by a small classic-BPF interpreter, for both architectures and both network modes. */
class SeccompProgramTest {

    private static final int ALLOW = SeccompProgram.RET_ALLOW;
    private static final int EPERM = SeccompProgram.RET_ERRNO | SeccompProgram.EPERM;
    private static final int ENOSYS = SeccompProgram.RET_ERRNO | SeccompProgram.ENOSYS;

    /** Runs the program on seccomp_data {nr, arch, ip=0, args}. */
    static int run(List<long[]> program, int arch, int nr, long... args) {
        ByteBuffer data = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        data.putInt(0, nr).putInt(4, arch);
        for (int i = 0; i < args.length; i++) {
            data.putLong(16 + 8 * i, args[i]);
        }
        long acc = 0;
        int pc = 0;
        for (int steps = 0; steps < 10_000; steps++) {
            long[] in = program.get(pc);
            int code = (int) in[0];
            long k = in[3];
            switch (code) {
                case 0x20 -> acc = data.getInt((int) k) & 0xffffffffL;
                case 0x54 -> acc &= k;
                case 0x06 -> {
                    return (int) k;
                }
                case 0x15 -> pc += acc == k ? (int) in[1] : (int) in[2];
                case 0x35 -> pc += acc >= k ? (int) in[1] : (int) in[2];
                case 0x45 -> pc += (acc & k) != 0 ? (int) in[1] : (int) in[2];
                default -> throw new IllegalStateException("unexpected opcode " + code);
            }
            pc++;
        }
        throw new IllegalStateException("no return");
    }

    @ParameterizedTest
    @EnumSource(SeccompProgram.Arch.class)
    void should_refuse_listed_calls_and_allow_others(SeccompProgram.Arch arch) {
        List<long[]> p = SeccompProgram.instructions(arch, NetworkMode.RESTRICTED);
        int a = arch.auditArch;
        for (String call : SeccompProgram.ALWAYS_DENIED) {
            assertThat(run(p, a, arch.nr(call))).as(call).isEqualTo(EPERM);
        }
        assertThat(run(p, a, arch.nr("clone3"))).isEqualTo(ENOSYS);
        assertThat(run(p, a, 0)).isEqualTo(arch == SeccompProgram.Arch.X86_64 ? ALLOW : ALLOW); // read / io_setup
        assertThat(run(p, a, arch.nr("ioctl"), 1, 0x5401)).isEqualTo(ALLOW); // TCGETS
        assertThat(run(p, a, arch.nr("ioctl"), 1, SeccompProgram.TIOCSTI)).isEqualTo(EPERM);
        // The request is compared on its low 32 bits, as the kernel does.
        assertThat(run(p, a, arch.nr("ioctl"), 1, 0xffffffff00000000L | SeccompProgram.TIOCSTI)).isEqualTo(EPERM);
        assertThat(run(p, a, arch.nr("ioctl"), 1, SeccompProgram.TIOCLINUX)).isEqualTo(EPERM);
        assertThat(run(p, a, arch.nr("clone"), 0x01200011L)).isEqualTo(ALLOW); // fork-like clone
        assertThat(run(p, a, arch.nr("clone"), 0x003d0f00L)).isEqualTo(ALLOW); // pthread_create flags
        assertThat(run(p, a, arch.nr("clone"), 0x10000000L | 17)).isEqualTo(EPERM); // CLONE_NEWUSER
        assertThat(run(p, a, arch.nr("clone"), 0x00020000L | 17)).isEqualTo(EPERM); // CLONE_NEWNS
    }

    @ParameterizedTest
    @EnumSource(SeccompProgram.Arch.class)
    void should_refuse_unix_sockets_only_when_restricted(SeccompProgram.Arch arch) {
        int a = arch.auditArch;
        List<long[]> r = SeccompProgram.instructions(arch, NetworkMode.RESTRICTED);
        List<long[]> e = SeccompProgram.instructions(arch, NetworkMode.ENABLED);
        int socket = arch.nr("socket");
        int pair = arch.nr("socketpair");
        assertThat(run(r, a, socket, 1, 1)).isEqualTo(EPERM);
        assertThat(run(r, a, socket, 40, 1)).isEqualTo(EPERM);
        assertThat(run(r, a, socket, 2, 1)).isEqualTo(ALLOW);
        assertThat(run(r, a, socket, 10, 2)).isEqualTo(ALLOW);
        assertThat(run(r, a, pair, 1, 2)).isEqualTo(EPERM); // SOCK_DGRAM
        assertThat(run(r, a, pair, 1, 2 | 0x80000)).isEqualTo(EPERM); // SOCK_DGRAM | SOCK_CLOEXEC
        assertThat(run(r, a, pair, 1, 1)).isEqualTo(ALLOW); // SOCK_STREAM
        assertThat(run(r, a, pair, 1, 5)).isEqualTo(ALLOW); // SOCK_SEQPACKET
        assertThat(run(e, a, socket, 1, 1)).isEqualTo(ALLOW);
        assertThat(run(e, a, pair, 1, 2)).isEqualTo(ALLOW);
        assertThat(run(e, a, arch.nr("unshare"), 0)).isEqualTo(EPERM);
    }

    @Test
    void should_refuse_foreign_architectures_and_x32() {
        List<long[]> p = SeccompProgram.instructions(SeccompProgram.Arch.X86_64, NetworkMode.ENABLED);
        assertThat(run(p, 0x40000003, 3)).isEqualTo(EPERM); // i386 int 0x80
        assertThat(run(p, SeccompProgram.Arch.X86_64.auditArch, 0x40000000 | 41, 1)).isEqualTo(EPERM); // x32
        assertThat(run(p, SeccompProgram.Arch.X86_64.auditArch, 1)).isEqualTo(ALLOW);
    }

    @Test
    void should_serialise_as_eight_byte_native_entries() {
        List<long[]> p = SeccompProgram.instructions(SeccompProgram.Arch.X86_64, NetworkMode.RESTRICTED);
        byte[] bytes = SeccompProgram.serialize(p);
        assertThat(bytes).hasSize(p.size() * 8);
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder());
        assertThat(b.getShort(0)).isEqualTo((short) 0x20); // ld [4]: the architecture first
        assertThat(b.getInt(4)).isEqualTo(4);
        assertThat(p.size()).isLessThan(256);
    }
}
