package dev.codeexec.network;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Reads the server name (SNI) of a TLS ClientHello without terminating TLS: the proxy compares it with the host the
 * tunnel was asked for, so that a tunnel to an allowed name cannot carry a handshake for another (domain fronting
 * at the TLS layer). Only the first handshake record is read.
 */
final class ClientHello {

    /** The outcome of looking at the first bytes of a tunnel. */
    enum Kind {
        /** Not a TLS handshake: another protocol, passed on as it is. */
        NOT_TLS,
        /** A complete ClientHello was read ({@link Result#serverName()} may be empty). */
        HELLO,
        /** More bytes are needed. */
        INCOMPLETE,
        /** Claims to be a TLS handshake but cannot be read: refused. */
        MALFORMED
    }

    record Result(Kind kind, Optional<String> serverName) {
    }

    /** The largest first record the proxy waits for (a TLS record holds at most 2^14 bytes plus overhead). */
    static final int MAX_RECORD = 5 + 16384 + 2048;

    private ClientHello() {
    }

    /** Looks at the bytes {@code data[0, length)} a program sent first in a tunnel. */
    static Result inspect(byte[] data, int length) {
        if (length < 1) {
            return new Result(Kind.INCOMPLETE, Optional.empty());
        }
        int recordType = data[0] & 0xff;
        if (recordType < 0x14 || recordType > 0x17) {
            return new Result(Kind.NOT_TLS, Optional.empty());
        }
        if (recordType != 0x16) {
            // A TLS record that is not a handshake (an alert, change_cipher_spec, data) before the ClientHello: some
            // servers skip it and read the next record, whose server name would then go unchecked.
            return malformed();
        }
        if (length < 5) {
            return new Result(Kind.INCOMPLETE, Optional.empty());
        }
        int recordLength = ((data[3] & 0xff) << 8) | (data[4] & 0xff);
        if (recordLength > MAX_RECORD - 5) {
            return malformed();
        }
        if (length < 5 + recordLength) {
            return new Result(Kind.INCOMPLETE, Optional.empty());
        }
        try {
            ByteBuffer b = ByteBuffer.wrap(data, 5, recordLength);
            if (b.get() != 1) {
                return malformed();
            }
            int helloLength = u24(b);
            if (helloLength > b.remaining()) {
                return malformed(); // a ClientHello split over records: refused rather than guessed
            }
            b.limit(b.position() + helloLength);
            skip(b, 2 + 32);
            skip(b, b.get() & 0xff);
            skip(b, b.getShort() & 0xffff);
            skip(b, b.get() & 0xff);
            if (!b.hasRemaining()) {
                return new Result(Kind.HELLO, Optional.empty());
            }
            int extensionsEnd = (b.getShort() & 0xffff) + b.position();
            if (extensionsEnd > b.limit()) {
                return malformed();
            }
            Optional<String> name = Optional.empty();
            while (b.position() + 4 <= extensionsEnd) {
                int type = b.getShort() & 0xffff;
                int len = b.getShort() & 0xffff;
                if (b.position() + len > extensionsEnd) {
                    return malformed();
                }
                if (type != 0) {
                    skip(b, len);
                    continue;
                }
                if (name.isPresent()) {
                    return malformed(); // two server_name extensions
                }
                ByteBuffer ext = b.slice(b.position(), len);
                skip(b, len);
                int listEnd = (ext.getShort() & 0xffff) + ext.position();
                if (listEnd > ext.limit()) {
                    return malformed();
                }
                int names = 0;
                while (ext.position() < listEnd) {
                    int nameType = ext.get() & 0xff;
                    int nameLength = ext.getShort() & 0xffff;
                    byte[] n = new byte[nameLength];
                    ext.get(n);
                    if (nameType == 0) {
                        names++;
                        name = Optional.of(new String(n, StandardCharsets.US_ASCII));
                    }
                }
                if (names > 1) {
                    return malformed();
                }
            }
            return new Result(Kind.HELLO, name);
        } catch (RuntimeException e) {
            return malformed();
        }
    }

    private static Result malformed() {
        return new Result(Kind.MALFORMED, Optional.empty());
    }

    private static int u24(ByteBuffer b) {
        return ((b.get() & 0xff) << 16) | ((b.get() & 0xff) << 8) | (b.get() & 0xff);
    }

    private static void skip(ByteBuffer b, int n) {
        b.position(b.position() + n);
    }
}
