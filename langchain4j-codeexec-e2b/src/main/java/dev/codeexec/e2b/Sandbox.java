package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.codeexec.engine.StdStream;
import dev.codeexec.spi.BoundedOutput;
import java.io.IOException;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One live sandbox of an engine: its envd and code interpreter, whether this engine owns it (and kills it), the
 * workspace user's ids, its use (for the lease renewer), and whether it is known to be gone. A sandbox that is gone
 * stays gone: every later operation fails fast with {@link E2bSandboxGoneException}.
 */
final class Sandbox {

    private static final Logger LOG = LoggerFactory.getLogger(Sandbox.class);

    /** How often envd sends a keepalive on a silent stream: what this engine asks for. */
    static final Duration KEEPALIVE = Duration.ofSeconds(15);

    /** How long a helper (setup, signal, file moves) may take. */
    static final Duration HELPER_TIMEOUT = Duration.ofSeconds(60);

    /** Bytes of a helper's output kept. */
    private static final int HELPER_OUTPUT = 64 << 10;

    final E2bSandbox info;
    final Envd envd;
    final E2bControlPlane control;
    final boolean owned;
    private final String label;
    private final CodeInterpreter interpreter;
    private final AtomicInteger active = new AtomicInteger();
    private volatile long lastUse = System.nanoTime();
    private volatile E2bSandboxGoneException gone;
    private volatile int uid = -1;
    private volatile int gid = -1;

    /** @param label what it is for, in logs: a workspace id or {@code shared} */
    Sandbox(E2bSandbox info, E2bHttp http, E2bControlPlane control, boolean owned, String label) {
        this.info = info;
        this.envd = new Envd(http, SandboxAddress.of(info, http.config()));
        this.control = control;
        this.owned = owned;
        this.label = label;
        this.interpreter = new CodeInterpreter(http, envd.address());
    }

    String id() {
        return info.sandboxId();
    }

    CodeInterpreter interpreter() {
        return interpreter;
    }

    int uid() {
        return uid;
    }

    int gid() {
        return gid;
    }

    boolean hasIds() {
        return uid >= 0;
    }

    void ids(int uid, int gid) {
        this.uid = uid;
        this.gid = gid;
    }

    /** Marks a use (a request or a run starting), for the lease renewer. */
    void used() {
        lastUse = System.nanoTime();
    }

    long lastUse() {
        return lastUse;
    }

    /** A run or session starts in this sandbox (the renewer keeps it alive meanwhile). */
    void runStarted() {
        active.incrementAndGet();
        used();
    }

    void runEnded() {
        active.decrementAndGet();
        used();
    }

    boolean busy() {
        return active.get() > 0;
    }

    /** @throws E2bSandboxGoneException when the sandbox is known to be gone */
    void requireAlive() {
        E2bSandboxGoneException g = gone;
        if (g != null) {
            throw g;
        }
        used();
    }

    boolean isGone() {
        return gone != null;
    }

    void markGone(E2bSandboxGoneException e) {
        if (gone == null) {
            gone = e;
        }
    }

    /**
     * After a request to the sandbox failed without an answer: asks the control plane whether it still exists.
     *
     * @return the exception to throw when it is gone (it is marked gone), or null when it exists or that cannot be told
     */
    E2bSandboxGoneException checkGone(String what) {
        if (gone != null) {
            return gone;
        }
        try {
            if (control.find(id()).isEmpty()) {
                markGone(new E2bSandboxGoneException("sandbox " + id() + " is gone (it timed out or was killed) and "
                        + "could not " + what, id(), 404, "not_found"));
            }
        } catch (RuntimeException e) {
            LOG.debug("could not tell whether sandbox {} still exists", id(), e);
        }
        return gone;
    }

    /** Translates a failure of a request to this sandbox: a gone sandbox is marked and reported as gone. */
    RuntimeException failure(RuntimeException e, String what) {
        if (e instanceof E2bSandboxGoneException g) {
            markGone(g);
            return g;
        }
        if (e instanceof E2bApiException api && api.httpStatus() == 0) {
            // No answer at all: the sandbox may have died under the request.
            E2bSandboxGoneException g = checkGone(what);
            if (g != null) {
                return g;
            }
        }
        return e;
    }

    /** The start request of {@code process.Process/Start}: stdin sent explicitly, as envd reads its absence as true. */
    static ObjectNode startRequest(List<String> argv, String cwd, boolean stdin) {
        ObjectNode req = Json.object();
        ObjectNode process = req.putObject("process");
        process.put("cmd", argv.get(0));
        ArrayNode args = process.putArray("args");
        argv.subList(1, argv.size()).forEach(args::add);
        if (cwd != null) {
            process.put("cwd", cwd);
        }
        req.put("stdin", stdin);
        return req;
    }

    /** What a helper printed, and its status. */
    record HelperResult(int exitCode, String stdout, String stderr) {
        /** The rest of the first stdout line starting with {@code prefix + " "}, or null. */
        String line(String prefix) {
            for (String l : stdout.split("\n")) {
                if (l.startsWith(prefix + " ")) {
                    return l.substring(prefix.length() + 1);
                }
            }
            return null;
        }
    }

    /**
     * Runs a helper program as root and waits for it: {@code Process/Start} with stdin off, its output kept up to 64
     * KiB, bounded by {@link #HELPER_TIMEOUT} on envd's side ({@code Connect-Timeout-Ms} kills it there).
     *
     * @throws E2bSandboxGoneException when the sandbox is gone
     * @throws E2bApiException         when envd fails or the helper does not end in time
     */
    HelperResult helper(List<String> argv, String what) {
        requireAlive();
        BoundedOutput out = new BoundedOutput(HELPER_OUTPUT);
        BoundedOutput err = new BoundedOutput(HELPER_OUTPUT);
        EnvdStream s;
        try {
            s = envd.stream("process.Process/Start", startRequest(argv, "/", false), Envd.ROOT, HELPER_TIMEOUT,
                    KEEPALIVE, what);
        } catch (RuntimeException e) {
            throw failure(e, what);
        }
        Integer exit = null;
        try (s) {
            JsonNode m;
            while ((m = s.next()) != null) {
                JsonNode ev = m.path("event");
                if (ev.has("data")) {
                    JsonNode d = ev.get("data");
                    if (d.has("stdout")) {
                        byte[] b = decode(d.get("stdout").asText(), what);
                        out.write(b, 0, b.length);
                    } else if (d.has("stderr")) {
                        byte[] b = decode(d.get("stderr").asText(), what);
                        err.write(b, 0, b.length);
                    }
                } else if (ev.has("end")) {
                    exit = ev.get("end").path("exitCode").asInt(0);
                }
            }
        } catch (IOException e) {
            E2bSandboxGoneException g = checkGone(what);
            if (g != null) {
                throw g;
            }
            throw new E2bProtocolException("sandbox " + id() + ": the stream of '" + what + "' broke off ("
                    + e.getClass().getSimpleName() + ")", e);
        } catch (RuntimeException e) {
            throw failure(e, what);
        }
        if (exit == null) {
            throw new E2bProtocolException("sandbox " + id() + ": '" + what + "' ended without the program's end event",
                    200, "truncated");
        }
        return new HelperResult(exit, out.text(), err.text());
    }

    /** Decodes a {@code bytes} field: standard base64 as proto3 JSON writes it, URL-safe as its parsers accept. */
    static byte[] decode(String base64, String what) {
        try {
            return Base64.getDecoder().decode(base64);
        } catch (IllegalArgumentException e) {
            try {
                return Base64.getUrlDecoder().decode(base64);
            } catch (IllegalArgumentException e2) {
                throw new E2bProtocolException("a bytes field of '" + what + "' is not base64", 200, null);
            }
        }
    }

    /** Which stream a data event is: {@code stdout} / {@code stderr} (a {@code pty} counts as stdout). */
    static StdStream streamOf(JsonNode data) {
        return data.has("stderr") ? StdStream.STDERR : StdStream.STDOUT;
    }

    /** Kills the sandbox if this engine owns it; a sandbox already gone is fine. */
    void kill() {
        if (!owned) {
            return;
        }
        try {
            control.kill(id());
        } finally {
            markGone(new E2bSandboxGoneException("sandbox " + id() + " was killed by this engine", id(), 0, null));
        }
    }

    @Override
    public String toString() {
        return "sandbox " + id() + " (" + label + (owned ? "" : ", not owned") + ")";
    }
}
