package dev.codeexec.e2b;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;

/** Reads a body whole, up to a bound: an answer larger than the bound is a protocol failure, never a memory one. */
final class Bounded {

    /** The most bytes of a JSON answer (a listing of a large tree fits): {@value}. */
    static final int JSON_BYTES = 64 << 20;

    /** The most bytes of an error answer that are read: {@value}. */
    static final int ERROR_BYTES = 64 << 10;

    private Bounded() {
    }

    static byte[] read(InputStream in, int max, String what) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[16 << 10];
        int n;
        while ((n = in.read(buf)) >= 0) {
            if (out.size() + n > max) {
                throw new E2bProtocolException("the answer to '" + what + "' is larger than " + max
                        + " bytes; refusing to read it", 0, null);
            }
            out.write(buf, 0, n);
        }
        return out.toByteArray();
    }
}
