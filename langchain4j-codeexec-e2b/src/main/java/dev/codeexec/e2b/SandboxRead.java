package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.WorkspaceGoneException;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;

/**
 * One read of a workspace file inside its sandbox ({@link SandboxScripts#READ_FILE}): the check that the path names
 * a regular file of the workspace and the read are one program, one {@code process.Process/Start} stream, so a link
 * swapped in between them can only make the read refuse, never return another file's bytes. The opened file's size
 * comes first, then its bytes, which {@link #body()} streams as they arrive (bounded memory for any size).
 *
 * <p>A read the script found racing a change of the path is started again, at most {@value #ATTEMPTS} times in all;
 * then it is refused.
 */
final class SandboxRead implements AutoCloseable {

    /** Attempts of a read whose path changed while it was being read. */
    static final int ATTEMPTS = 3;

    /** The longest a read may take on envd's side ({@code Connect-Timeout-Ms}). */
    static final Duration DEADLINE = Duration.ofMinutes(2);

    private static final String HEADER = "codeexec-file ";

    private final Sandbox sandbox;
    private final EnvdStream stream;
    private final String asked;
    private long size = -1;
    private final Body body = new Body();
    private byte[] chunk = new byte[0];
    private int pos;
    private Integer exit;

    private SandboxRead(Sandbox sandbox, EnvdStream stream, String asked) {
        this.sandbox = sandbox;
        this.stream = stream;
        this.asked = asked;
    }

    /**
     * Starts a read of {@code rel} (checked, normalised, workspace-relative) as {@code user}.
     *
     * @param length the bytes wanted from {@code offset}; empty for all
     * @throws PathEscapeException   when a link on the path leaves the workspace or does not resolve
     * @throws InvalidSpecException  when nothing is there or it is not a regular file
     * @throws WorkspaceGoneException when the workspace (or its sandbox) is gone
     * @throws CodeExecException     when the path kept changing while it was read, or the read failed
     */
    static SandboxRead open(Sandbox sandbox, String user, String root, String rel, String asked, long offset,
                            OptionalLong length) {
        String what = "read '" + asked + "'";
        List<String> argv = List.of("/bin/sh", "-c", SandboxScripts.READ_FILE, "sh", root, rel,
                Long.toString(offset), length.isPresent() ? Long.toString(length.getAsLong()) : "-");
        for (int attempt = 1; ; attempt++) {
            sandbox.requireAlive();
            EnvdStream s;
            try {
                s = sandbox.envd.stream("process.Process/Start", Sandbox.startRequest(argv, "/", false), user,
                        DEADLINE, Sandbox.KEEPALIVE, what);
            } catch (RuntimeException e) {
                throw sandbox.failure(e, what);
            }
            SandboxRead r = new SandboxRead(sandbox, s, asked);
            String header;
            try {
                header = r.header();
            } catch (IOException e) {
                r.close();
                throw r.broke(e);
            } catch (RuntimeException e) {
                r.close();
                throw sandbox.failure(e, what);
            }
            if (header != null) {
                try {
                    r.size = Long.parseLong(header);
                    return r;
                } catch (NumberFormatException e) {
                    r.close();
                    throw new E2bProtocolException("sandbox " + sandbox.id() + ": the read of '" + asked
                            + "' began with a malformed size", 200, null);
                }
            }
            int status = r.exitCode();
            r.close();
            if (status == 24 && attempt < ATTEMPTS) {
                continue;
            }
            throw refusal(status, asked, sandbox.id());
        }
    }

    private static RuntimeException refusal(int status, String asked, String sandboxId) {
        return switch (status) {
            case 20 -> new PathEscapeException("path '" + asked + "' leads outside the workspace through a link");
            case 21 -> new PathEscapeException("path '" + asked + "' goes through a link that does not resolve");
            case 22 -> new InvalidSpecException("'" + asked + "' does not exist");
            case 23 -> new InvalidSpecException("'" + asked + "' is not a regular file");
            case 24 -> new CodeExecException("'" + asked + "' kept changing while it was being read (a link or a "
                    + "directory was replaced meanwhile); nothing was read");
            case 25 -> new WorkspaceGoneException("the workspace is gone (its directory in sandbox " + sandboxId
                    + " was removed)");
            case 27 -> new CodeExecException("'" + asked + "' is not readable (permission denied)");
            default -> new CodeExecException("could not read '" + asked + "' in sandbox " + sandboxId + " (status "
                    + status + ")");
        };
    }

    /** A stream that broke: the sandbox gone, or the read cut off. */
    private RuntimeException broke(IOException e) {
        E2bSandboxGoneException g = sandbox.checkGone("read '" + asked + "'");
        if (g != null) {
            return g;
        }
        return new CodeExecException("'" + asked + "' could not be read (the read broke off)", e);
    }

    /** The size of the file that was opened (the whole file, not the window). */
    long size() {
        return size;
    }

    /**
     * The bytes, from the offset asked: ends after the window or the file. A read that failed midway throws
     * {@link IOException}.
     */
    InputStream body() {
        return body;
    }

    /** The first stdout line when it is the header; null when the program ended without one. */
    private String header() throws IOException {
        StringBuilder line = new StringBuilder();
        int b;
        while ((b = nextByte()) >= 0) {
            if (b == '\n') {
                String l = line.toString();
                if (!l.startsWith(HEADER)) {
                    throw new E2bProtocolException("sandbox " + sandbox.id() + ": the read of '" + asked
                            + "' did not begin with the file's size", 200, null);
                }
                return l.substring(HEADER.length());
            }
            if (line.length() > 64) {
                throw new E2bProtocolException("sandbox " + sandbox.id() + ": the read of '" + asked
                        + "' began with an overlong line", 200, null);
            }
            line.append((char) b);
        }
        if (line.length() > 0) {
            throw new E2bProtocolException("sandbox " + sandbox.id() + ": the read of '" + asked
                    + "' ended inside its header", 200, null);
        }
        return null;
    }

    private int nextByte() throws IOException {
        if (!fill()) {
            return -1;
        }
        return chunk[pos++] & 0xFF;
    }

    /** Makes bytes available; false at the end of the program's stdout. */
    private boolean fill() throws IOException {
        while (pos >= chunk.length) {
            JsonNode m = stream.next();
            if (m == null) {
                return false;
            }
            JsonNode ev = m.path("event");
            JsonNode data = ev.get("data");
            if (data != null && data.has("stdout")) {
                chunk = Sandbox.decode(data.get("stdout").asText(), "read '" + asked + "'");
                pos = 0;
            } else if (ev.has("end")) {
                exit = ev.get("end").path("exitCode").asInt(0);
            }
            // start, stderr, keepalive: nothing to hand on.
        }
        return true;
    }

    /** The script's exit status, after its stdout ended. */
    private int exitCode() {
        if (exit == null) {
            throw new E2bProtocolException("sandbox " + sandbox.id() + ": the read of '" + asked
                    + "' ended without the program's end event", 200, "truncated");
        }
        return exit;
    }

    @Override
    public void close() {
        stream.close();
    }

    /** The program's stdout after the header; its end checks the program's status. */
    private final class Body extends InputStream {
        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            try {
                if (!fill()) {
                    int status = exitCode();
                    if (status != 0) {
                        throw new IOException("the read of '" + asked + "' ended with status " + status);
                    }
                    return -1;
                }
            } catch (RuntimeException e) {
                throw new IOException(e.getMessage(), e);
            }
            int n = Math.min(len, chunk.length - pos);
            System.arraycopy(chunk, pos, b, off, n);
            pos += n;
            return n;
        }

        @Override
        public void close() {
            SandboxRead.this.close();
        }
    }
}
