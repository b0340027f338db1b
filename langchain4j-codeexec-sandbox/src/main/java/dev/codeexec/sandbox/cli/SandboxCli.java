package dev.codeexec.sandbox.cli;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.StdStream;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.sandbox.AdditionalPermissions;
import dev.codeexec.sandbox.NetworkMode;
import dev.codeexec.sandbox.PermissionProfile;
import dev.codeexec.sandbox.SandboxEngine;
import dev.codeexec.workspace.WorkspaceGlob;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Runs one command in the sandbox from a shell, so that operators can try a policy:
 *
 * <pre>
 * java -jar langchain4j-codeexec-sandbox-&lt;version&gt;-cli.jar [--profile read-only|workspace-write|danger-full-access]
 *     [--network restricted|enabled] [--read PATH]... [--write PATH]... [--deny PATH]...
 *     [--env inherit-all|core|none] [--set NAME=VALUE]... [--workspace DIR] [--timeout SECONDS] -- COMMAND [ARG...]
 * java -jar langchain4j-codeexec-sandbox-&lt;version&gt;-cli.jar -h|--help
 * </pre>
 *
 * <p>The command runs with its working directory in {@code work/} of the workspace (DIR, or a fresh temporary
 * directory removed afterwards); stdout and stderr are streamed as they come; standard input is closed. The exit
 * status is the command's, {@value #EXIT_TIMEOUT} when the timeout killed it, {@value #EXIT_SETUP} when the sandbox
 * could not be set up or the command line is invalid (an unknown option, a missing value: the reason and the usage
 * are printed on stderr; nothing ran). {@code -h} or {@code --help} before {@code --} prints the usage on stdout and
 * exits with {@value #EXIT_HELP}. The CLI's own errors use {@value #EXIT_SETUP}, as {@code timeout(1)} and
 * {@code env(1)} do, rather than 2: the exit status is otherwise the command's, and many commands exit with 2.
 */
public final class SandboxCli {

    /** Exit status when the timeout expired (like {@code timeout(1)}). */
    public static final int EXIT_TIMEOUT = 124;
    /** Exit status when the sandbox could not be set up or the arguments are invalid. */
    public static final int EXIT_SETUP = 125;
    /** Exit status after printing the usage for {@code -h} or {@code --help}. */
    public static final int EXIT_HELP = 0;

    /** The options that take a value, as the next word. */
    private static final Set<String> VALUE_OPTIONS = Set.of("--profile", "--network", "--read", "--write", "--deny",
            "--env", "--set", "--workspace", "--timeout");

    static final String USAGE = String.join("\n",
            "usage: java -jar langchain4j-codeexec-sandbox-<version>-cli.jar [options] -- COMMAND [ARG...]",
            "  --profile read-only|workspace-write|danger-full-access   default workspace-write",
            "  --network restricted|enabled                             default restricted",
            "  --read PATH      grant read-only access (repeatable; relative paths are taken from the current directory)",
            "  --write PATH     grant write access (repeatable)",
            "  --deny PATH      hide a path (repeatable; a relative glob such as '**/.env' hides workspace matches)",
            "  --env inherit-all|core|none   what to inherit from this environment; default core (credentials are",
            "                   always dropped: names containing KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL)",
            "  --set NAME=VALUE set a variable (repeatable)",
            "  --workspace DIR  use DIR as the workspace (default: a fresh temporary one, removed afterwards)",
            "  --timeout SECONDS  default 30",
            "  -h, --help       print this help and exit",
            "exit status: the command's; 124 on timeout; 125 when the sandbox cannot be set up or the options",
            "             are invalid (nothing ran); 0 after --help");

    private SandboxCli() {
    }

    /** Runs the command line and exits with its status (see the class documentation). */
    public static void main(String[] args) {
        // The library logs through SLF4J; on the command line only warnings matter, and they go to stderr.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        System.exit(run(args, System.out, System.err, System.getenv(), Path.of("").toAbsolutePath()));
    }

    /** Parsed options; {@link #HELP} when the usage was asked for. */
    record Options(PermissionProfile profile, ShellEnvironmentPolicy env, Path workspace, Duration timeout,
                   List<String> command) {

        /** {@code -h} or {@code --help}: print the usage, run nothing. */
        static final Options HELP = new Options(null, null, null, null, List.of());

        boolean help() {
            return this == HELP;
        }
    }

    /** Runs the CLI and returns the exit status (for tests; {@link #main} exits with it). */
    static int run(String[] args, PrintStream out, PrintStream err, Map<String, String> hostEnv, Path cwd) {
        Options o;
        try {
            o = parse(args, cwd);
            if (o.help()) {
                out.println(USAGE);
                out.flush();
                return EXIT_HELP;
            }
        } catch (IllegalArgumentException e) {
            err.println("codeexec-sandbox: " + e.getMessage());
            err.println(USAGE);
            return EXIT_SETUP;
        } catch (CodeExecException e) {
            err.println("codeexec-sandbox: " + e.getMessage());
            return EXIT_SETUP;
        }
        try {
            // The engine's own temporary root (removed when it closes); without --workspace the command runs in a
            // fresh workspace of the engine, like any run of the library.
            try (SandboxEngine engine = SandboxEngine.builder()
                    .profile(o.profile()).environmentPolicy(o.env()).hostEnvironment(hostEnv).build()) {
                RunProgramSpec spec = RunProgramSpec.builder(o.command().get(0))
                        .args(o.command().subList(1, o.command().size())).cwd("work").timeout(o.timeout())
                        .maxOutputBytes(64 * 1024)
                        .outputListener((stream, chunk) -> {
                            PrintStream target = stream == StdStream.STDOUT ? out : err;
                            synchronized (target) {
                                target.write(chunk, 0, chunk.length);
                                target.flush();
                            }
                        }).build();
                RunResult r = o.workspace() != null
                        ? engine.runInDirectory(o.workspace(), spec, AdditionalPermissions.NONE)
                        : engine.runner().runProgram(engine.manager().createWorkspace("cli", WorkspacePolicy.DEFAULT),
                                spec);
                out.flush();
                err.flush();
                if (r.timedOut()) {
                    err.println("codeexec-sandbox: timed out after " + o.timeout().toSeconds()
                            + " s; the command and everything it started were killed");
                    return EXIT_TIMEOUT;
                }
                return r.exitCode();
            }
        } catch (CodeExecException e) {
            err.println("codeexec-sandbox: " + e.getMessage());
            return EXIT_SETUP;
        }
    }

    static Options parse(String[] args, Path cwd) {
        PermissionProfile profile = null;
        NetworkMode network = null;
        List<String> read = new ArrayList<>();
        List<String> write = new ArrayList<>();
        List<String> deny = new ArrayList<>();
        ShellEnvironmentPolicy.Builder env = ShellEnvironmentPolicy.builder();
        Path workspace = null;
        Duration timeout = Duration.ofSeconds(RunProgramSpec.DEFAULT_TIMEOUT_SECONDS);
        int i = 0;
        for (; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--")) {
                i++;
                break;
            }
            if (a.equals("--help") || a.equals("-h")) {
                return Options.HELP;
            }
            if (!a.startsWith("-") || a.equals("-")) {
                throw new IllegalArgumentException("expected an option or '--' before the command, got '" + a + "'");
            }
            if (!VALUE_OPTIONS.contains(a)) {
                int eq = a.indexOf('=');
                String hint = eq > 0 && VALUE_OPTIONS.contains(a.substring(0, eq))
                        ? " (give the value as the next word: " + a.substring(0, eq) + " " + a.substring(eq + 1) + ")"
                        : "";
                throw new IllegalArgumentException("unknown option " + a + hint);
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("option " + a + " needs a value");
            }
            String v = args[++i];
            switch (a) {
                case "--profile" -> profile = PermissionProfile.preset(v);
                case "--network" -> network = NetworkMode.parse(v);
                case "--read" -> read.add(hostPath(v, cwd));
                case "--write" -> write.add(hostPath(v, cwd));
                case "--deny" -> deny.add(v);
                case "--env" -> env.inherit(ShellEnvironmentPolicy.Inherit.parse(v));
                case "--set" -> {
                    int eq = v.indexOf('=');
                    if (eq <= 0) {
                        throw new IllegalArgumentException("--set needs NAME=VALUE, got '" + v + "'");
                    }
                    env.set(v.substring(0, eq), v.substring(eq + 1));
                }
                case "--workspace" -> workspace = cwd.resolve(v).normalize();
                case "--timeout" -> {
                    try {
                        timeout = Duration.ofMillis(Math.round(Double.parseDouble(v) * 1000));
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("--timeout needs a number of seconds, got '" + v + "'");
                    }
                    if (timeout.isNegative() || timeout.isZero()) {
                        throw new IllegalArgumentException("--timeout must be positive, got '" + v + "'");
                    }
                }
                default -> throw new IllegalStateException("option " + a + " has no case");
            }
        }
        if (i >= args.length) {
            throw new IllegalArgumentException("no command given; put it after '--'");
        }
        List<String> command = List.of(args).subList(i, args.length);
        PermissionProfile p = profile == null ? PermissionProfile.workspaceWrite() : profile;
        if (network != null) {
            p = p.withNetwork(network);
        }
        if (!read.isEmpty()) {
            p = p.withReadPaths(read.toArray(String[]::new));
        }
        if (!write.isEmpty()) {
            p = p.withWritePaths(write.toArray(String[]::new));
        }
        for (String d : deny) {
            // The one glob syntax (WorkspaceGlob): '*', '?', '[' and '{' make a workspace glob.
            p = WorkspaceGlob.isGlob(d) ? p.withNoAccessGlobs(d)
                    : p.withNoAccessPaths(d.startsWith("~/") ? d : hostPath(d, cwd));
        }
        return new Options(p, env.build(), workspace, timeout, command);
    }

    private static String hostPath(String v, Path cwd) {
        return v.startsWith("/") ? v : cwd.resolve(v).normalize().toString();
    }

}
