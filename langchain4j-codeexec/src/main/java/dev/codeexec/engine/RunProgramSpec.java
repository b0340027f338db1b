package dev.codeexec.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One program run in a workspace. Build with {@link #builder(String)}.
 *
 * @param cmd            the program: a bare name resolved against the run's own {@code PATH}, or an absolute path
 * @param args           its arguments
 * @param env            variables set for this run, on top of the base environment (inherited, or minimal when
 *                       {@code cleanEnv})
 * @param cleanEnv       start from a minimal environment ({@code PATH}, {@code HOME}, {@code TMPDIR}, {@code LANG} and
 *                       the workspace variables) instead of the engine's base environment
 * @param cwd            working directory, workspace-relative; {@code "."} is the workspace root
 * @param stdin          text fed to the program's standard input, then closed; null feeds nothing
 * @param timeout        wall-clock limit; on expiry the whole process tree is killed and the result is marked
 *                       {@link RunResult#timedOut()}
 * @param limits         resource limits; the engine refuses kinds it cannot enforce
 * @param maxOutputBytes bytes kept of each of stdout and stderr; 0 means the engine's default (1 MiB)
 * @param outputListener receives output as it arrives; null for none
 */
public record RunProgramSpec(String cmd, List<String> args, Map<String, String> env, boolean cleanEnv, String cwd,
                             String stdin, Duration timeout, ResourceLimits limits, int maxOutputBytes,
                             OutputListener outputListener) {

    /** {@value} seconds: the timeout when none is set. */
    public static final int DEFAULT_TIMEOUT_SECONDS = 30;

    public RunProgramSpec {
        if (cmd == null || cmd.isBlank()) {
            throw new InvalidSpecException("cmd must not be null or blank");
        }
        if (cmd.indexOf('\0') >= 0) {
            throw new InvalidSpecException("cmd must not contain a NUL character");
        }
        args = args == null ? List.of() : List.copyOf(args);
        for (String a : args) {
            if (a.indexOf('\0') >= 0) {
                throw new InvalidSpecException("arguments must not contain a NUL character");
            }
        }
        Map<String, String> e = new LinkedHashMap<>();
        if (env != null) {
            env.forEach((k, v) -> {
                if (k == null || k.isEmpty() || k.indexOf('=') >= 0 || k.indexOf('\0') >= 0) {
                    throw new InvalidSpecException("environment variable name (" + k + ") is not valid");
                }
                if (v == null || v.indexOf('\0') >= 0) {
                    throw new InvalidSpecException("environment variable " + k + " must have a value without NUL");
                }
                e.put(k, v);
            });
        }
        env = java.util.Collections.unmodifiableMap(e);
        cwd = cwd == null || cwd.isBlank() ? "." : cwd;
        timeout = timeout == null ? Duration.ofSeconds(DEFAULT_TIMEOUT_SECONDS) : timeout;
        if (timeout.isNegative() || timeout.isZero()) {
            throw new InvalidSpecException("timeout (" + timeout + ") must be positive");
        }
        limits = limits == null ? ResourceLimits.NONE : limits;
        if (maxOutputBytes < 0) {
            throw new InvalidSpecException("maxOutputBytes (" + maxOutputBytes + ") must not be negative");
        }
    }

    /** A builder for running {@code cmd}. */
    public static Builder builder(String cmd) {
        return new Builder().cmd(cmd);
    }

    /** A builder for a shell command line run with {@code bash -c}. */
    public static Builder shell(String commandLine) {
        return new Builder().cmd("bash").args(List.of("-c", commandLine));
    }

    public Builder toBuilder() {
        return new Builder().cmd(cmd).args(args).env(env).cleanEnv(cleanEnv).cwd(cwd).stdin(stdin).timeout(timeout)
                .limits(limits).maxOutputBytes(maxOutputBytes).outputListener(outputListener);
    }

    /** Builder for {@link RunProgramSpec}. Validation happens in {@link #build()}. */
    public static final class Builder {
        private String cmd;
        private List<String> args = new ArrayList<>();
        private Map<String, String> env = new LinkedHashMap<>();
        private boolean cleanEnv;
        private String cwd;
        private String stdin;
        private Duration timeout;
        private ResourceLimits limits;
        private int maxOutputBytes;
        private OutputListener outputListener;

        public Builder cmd(String cmd) {
            this.cmd = cmd;
            return this;
        }

        public Builder args(List<String> args) {
            this.args = new ArrayList<>(args);
            return this;
        }

        public Builder args(String... args) {
            return args(List.of(args));
        }

        public Builder env(Map<String, String> env) {
            this.env = new LinkedHashMap<>(env);
            return this;
        }

        public Builder env(String name, String value) {
            this.env.put(name, value);
            return this;
        }

        public Builder cleanEnv(boolean cleanEnv) {
            this.cleanEnv = cleanEnv;
            return this;
        }

        /** Workspace-relative working directory; default {@code "."}. */
        public Builder cwd(String cwd) {
            this.cwd = cwd;
            return this;
        }

        public Builder stdin(String stdin) {
            this.stdin = stdin;
            return this;
        }

        /** Wall-clock limit; default {@value RunProgramSpec#DEFAULT_TIMEOUT_SECONDS} seconds. */
        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        public Builder limits(ResourceLimits limits) {
            this.limits = limits;
            return this;
        }

        /** Bytes kept per stream; default 0, meaning the engine's default (1 MiB). */
        public Builder maxOutputBytes(int maxOutputBytes) {
            this.maxOutputBytes = maxOutputBytes;
            return this;
        }

        public Builder outputListener(OutputListener outputListener) {
            this.outputListener = outputListener;
            return this;
        }

        public RunProgramSpec build() {
            return new RunProgramSpec(cmd, args, env, cleanEnv, cwd, stdin, timeout, limits, maxOutputBytes,
                    outputListener);
        }
    }
}
