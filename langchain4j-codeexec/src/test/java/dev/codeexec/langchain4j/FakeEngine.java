package dev.codeexec.langchain4j;

import dev.codeexec.FileRef;
import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.InputSpec;
import dev.codeexec.engine.InteractiveProgramRunner;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.OutputManifest;
import dev.codeexec.engine.OutputSpec;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.StageOptions;
import dev.codeexec.engine.StagedInput;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;

/** An in-memory engine for unit tests: files in maps, programs answered by a function. */
final class FakeEngine implements Engine {

    final Map<String, Map<String, byte[]>> files = new ConcurrentHashMap<>();
    final List<RunProgramSpec> runs = new CopyOnWriteArrayList<>();
    final List<String> created = new CopyOnWriteArrayList<>();
    final AtomicInteger ids = new AtomicInteger();
    volatile Capabilities capabilities = Capabilities.builder().supportsCleanEnv(true).build();
    /** Answers a run; may write files through {@link #files}. */
    volatile BiFunction<Workspace, RunProgramSpec, RunResult> program =
            (ws, spec) -> new RunResult("ok\n", "", 0, Duration.ofMillis(5), false, false, false);

    /** When set, every file operation (put, read, list) throws it, as an engine whose file system fails would. */
    volatile RuntimeException fileFailure;
    /**
     * When set, listing one of its folders returns its entries, the same list in every workspace, instead of looking
     * at the files: a workspace of thousands of files, simulated cheaply.
     */
    volatile Map<String, List<FileInfo>> sharedListings;
    /** When true, the engine offers background sessions ({@link FakeSession}). */
    volatile boolean interactive;
    final List<FakeSession> sessions = new CopyOnWriteArrayList<>();

    Map<String, byte[]> filesOf(Workspace ws) {
        return files.computeIfAbsent(ws.id(), k -> new ConcurrentHashMap<>());
    }

    @Override
    public String name() {
        return "fake";
    }

    @Override
    public WorkspaceManager manager() {
        return new WorkspaceManager() {
            @Override
            public Workspace createWorkspace(String execId, WorkspacePolicy policy) {
                Workspace ws = new Workspace("ws" + ids.incrementAndGet() + "-" + execId.replaceAll("[^A-Za-z0-9]", "_"),
                        "/fake/" + execId);
                created.add(execId);
                files.put(ws.id(), new ConcurrentHashMap<>());
                return ws;
            }

            @Override
            public void cleanup(Workspace workspace) {
                files.remove(workspace.id());
            }
        };
    }

    static String check(String path) {
        if (path.startsWith("/") || Arrays.asList(path.split("/")).contains("..")) {
            throw new PathEscapeException("path " + path + " leaves the workspace");
        }
        return path.equals(".") ? "" : path.replaceAll("^\\./", "");
    }

    @Override
    public WorkspaceFS fs() {
        return new WorkspaceFS() {
            @Override
            public void putFiles(Workspace ws, List<PutFile> list) {
                failIfAsked();
                list.forEach(f -> check(f.path()));
                list.forEach(f -> filesOf(ws).put(check(f.path()), f.content()));
            }

            @Override
            public void stageDirectory(Workspace ws, Path hostSource, String to, StageOptions options) {
                throw new UnsupportedOperationException();
            }

            @Override
            public List<FileRef> collect(Workspace ws, List<String> globs) {
                List<FileRef> out = new ArrayList<>();
                for (String g : globs) {
                    PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + g);
                    new TreeMap<>(filesOf(ws)).forEach((p, b) -> {
                        if (m.matches(Path.of(p))) {
                            out.add(new FileRef(p, "text/plain", b, b.length, false, null));
                        }
                    });
                }
                return out;
            }

            @Override
            public List<StagedInput> stageInputs(Workspace ws, List<InputSpec> inputs) {
                throw new dev.codeexec.engine.PolicyViolationException("host path /secret/host/file is not under an "
                        + "input root");
            }

            @Override
            public OutputManifest collectOutputs(Workspace ws, OutputSpec spec) {
                return new OutputManifest(collect(ws, spec.globs()), null);
            }

            @Override
            public FileRef readFile(Workspace ws, String path, long offset, int maxBytes) {
                failIfAsked();
                byte[] b = filesOf(ws).get(check(path));
                if (b == null) {
                    throw new InvalidSpecException("file " + path + " does not exist");
                }
                int from = (int) Math.min(offset, b.length);
                int to = (int) Math.min(b.length, from + (long) maxBytes);
                String mime = path.endsWith(".png") ? "image/png" : path.endsWith(".csv") ? "text/csv" : "text/plain";
                return new FileRef(path, mime, Arrays.copyOfRange(b, from, to), b.length, to < b.length, null);
            }

            @Override
            public Optional<FileInfo> stat(Workspace ws, String path) {
                failIfAsked();
                String p = check(path);
                byte[] b = filesOf(ws).get(p);
                if (b != null) {
                    return Optional.of(new FileInfo(p, b.length, false));
                }
                Map<String, List<FileInfo>> shared = sharedListings;
                boolean dir = p.isEmpty() || shared != null && shared.containsKey(p)
                        || filesOf(ws).keySet().stream().anyMatch(f -> f.startsWith(p + "/"));
                return dir ? Optional.of(new FileInfo(p.isEmpty() ? "." : p, 0, true)) : Optional.empty();
            }

            @Override
            public List<FileInfo> list(Workspace ws, String globOrDir) {
                failIfAsked();
                String p = check(globOrDir);
                Map<String, List<FileInfo>> shared = sharedListings;
                if (shared != null && shared.containsKey(p)) {
                    return shared.get(p);
                }
                List<FileInfo> out = new ArrayList<>();
                boolean glob = p.contains("*") || p.contains("?");
                PathMatcher m = glob ? FileSystems.getDefault().getPathMatcher("glob:" + p) : null;
                new TreeMap<>(filesOf(ws)).forEach((f, b) -> {
                    if (glob ? m.matches(Path.of(f)) : p.isEmpty() || f.equals(p) || f.startsWith(p + "/")) {
                        out.add(new FileInfo(f, b.length, false));
                    }
                });
                return out;
            }

            @Override
            public void delete(Workspace ws, String path) {
                filesOf(ws).remove(check(path));
            }
        };
    }

    @Override
    public ProgramRunner runner() {
        return (ws, spec) -> {
            check(spec.cwd());
            runs.add(spec);
            return program.apply(ws, spec);
        };
    }

    private void failIfAsked() {
        RuntimeException e = fileFailure;
        if (e != null) {
            throw e;
        }
    }

    @Override
    public Optional<InteractiveProgramRunner> interactive() {
        if (!interactive) {
            return Optional.empty();
        }
        return Optional.of((ws, spec) -> {
            FakeSession s = new FakeSession("engine-session-" + (sessions.size() + 1));
            sessions.add(s);
            return s;
        });
    }

    /** A session that prints nothing and runs until it is killed. */
    static final class FakeSession implements ProgramSession {
        private final String id;
        private volatile Integer exitCode;

        FakeSession(String id) {
            this.id = id;
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public ProgramPoll poll(long offset, int maxBytes) {
            return new ProgramPoll("", offset, offset, 0, exitCode == null, exitCode, false);
        }

        @Override
        public ProgramPoll await(Duration wait, long offset, int maxBytes) {
            return poll(offset, maxBytes);
        }

        @Override
        public void write(String data, boolean newline) {
        }

        @Override
        public void closeStdin() {
        }

        @Override
        public void kill(Duration grace) {
            exitCode = 143;
        }

        @Override
        public Optional<Integer> exitCode() {
            return Optional.ofNullable(exitCode);
        }

        @Override
        public void close() {
            kill(Duration.ZERO);
        }
    }

    @Override
    public Capabilities describe() {
        return capabilities;
    }

    @Override
    public void close() {
        files.clear();
    }
}
