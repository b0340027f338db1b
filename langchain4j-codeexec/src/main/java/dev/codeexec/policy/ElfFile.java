package dev.codeexec.policy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HexFormat;

/**
 * What the policy reads from an ELF executable to know which program it is: its GNU build id (the same for a copy, a
 * hard link, or a copy with bytes appended) and its program interpreter ({@code PT_INTERP}: the dynamic loader the
 * kernel starts for it). Reads only the headers, never more than a few pages.
 *
 * @param buildId     the build id as hex, or null when the file has none
 * @param interpreter the {@code PT_INTERP} path, or null for a static executable
 */
record ElfFile(String buildId, String interpreter) {

    private static final int PT_INTERP = 3;
    private static final int PT_NOTE = 4;
    private static final int NT_GNU_BUILD_ID = 3;
    /** Headers or notes larger than this are not what a real program has; such a file is read as no ELF. */
    private static final int MAX_READ = 64 * 1024;

    /** True when the first bytes are the ELF magic. */
    static boolean isElf(byte[] head) {
        return head.length >= 4 && head[0] == 0x7f && head[1] == 'E' && head[2] == 'L' && head[3] == 'F';
    }

    /** Reads {@code file}'s ELF headers; null when it is not an ELF file or they cannot be read. */
    static ElfFile read(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer h = read(ch, 0, 64);
            if (h == null || h.get(0) != 0x7f || h.get(1) != 'E' || h.get(2) != 'L' || h.get(3) != 'F') {
                return null;
            }
            boolean is64 = h.get(4) == 2;
            h.order(h.get(5) == 2 ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
            long phoff = is64 ? h.getLong(32) : Integer.toUnsignedLong(h.getInt(28));
            int phentsize = Short.toUnsignedInt(h.getShort(is64 ? 54 : 42));
            int phnum = Short.toUnsignedInt(h.getShort(is64 ? 56 : 44));
            if (phentsize < (is64 ? 56 : 32) || (long) phentsize * phnum > MAX_READ) {
                return null;
            }
            ByteBuffer ph = read(ch, phoff, phentsize * phnum);
            if (ph == null) {
                return null;
            }
            ph.order(h.order());
            String buildId = null;
            String interp = null;
            for (int i = 0; i < phnum; i++) {
                int base = i * phentsize;
                int type = ph.getInt(base);
                long offset = is64 ? ph.getLong(base + 8) : Integer.toUnsignedLong(ph.getInt(base + 4));
                long size = is64 ? ph.getLong(base + 32) : Integer.toUnsignedLong(ph.getInt(base + 16));
                if (size <= 0 || size > MAX_READ) {
                    continue;
                }
                if (type == PT_INTERP && interp == null) {
                    ByteBuffer b = read(ch, offset, (int) size);
                    if (b != null) {
                        byte[] bytes = new byte[(int) size];
                        b.get(0, bytes);
                        int len = 0;
                        while (len < bytes.length && bytes[len] != 0) {
                            len++;
                        }
                        interp = new String(bytes, 0, len, StandardCharsets.ISO_8859_1);
                    }
                } else if (type == PT_NOTE && buildId == null) {
                    ByteBuffer b = read(ch, offset, (int) size);
                    if (b != null) {
                        b.order(h.order());
                        buildId = buildId(b);
                    }
                }
            }
            return new ElfFile(buildId, interp);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String buildId(ByteBuffer notes) {
        int p = 0;
        while (p + 12 <= notes.limit()) {
            int namesz = notes.getInt(p);
            int descsz = notes.getInt(p + 4);
            int type = notes.getInt(p + 8);
            if (namesz < 0 || descsz < 0 || namesz > MAX_READ || descsz > MAX_READ) {
                return null;
            }
            int name = p + 12;
            int desc = name + align4(namesz);
            if (desc + descsz > notes.limit()) {
                return null;
            }
            if (type == NT_GNU_BUILD_ID && namesz == 4 && notes.get(name) == 'G' && notes.get(name + 1) == 'N'
                    && notes.get(name + 2) == 'U' && descsz > 0) {
                byte[] id = new byte[descsz];
                notes.get(desc, id);
                return HexFormat.of().formatHex(id);
            }
            p = desc + align4(descsz);
        }
        return null;
    }

    private static int align4(int n) {
        return (n + 3) & ~3;
    }

    private static ByteBuffer read(FileChannel ch, long offset, int length) throws IOException {
        if (offset < 0 || length <= 0 || length > MAX_READ) {
            return null;
        }
        ByteBuffer b = ByteBuffer.allocate(length);
        while (b.hasRemaining()) {
            if (ch.read(b, offset + b.position()) < 0) {
                return null;
            }
        }
        b.flip();
        return b;
    }
}
