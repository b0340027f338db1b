package dev.codeexec.workspace.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.WorkspaceGoneException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The path rules and the link-resolving walk of {@link RemoteWorkspaceFiles}, against an in-memory remote side whose
 * links are evaluated the way Docker and envd report them (the whole chain, to an absolute path, or nothing for a
 * loop). Like a real one, the remote side follows links among the parents of every path it is given, so a path the
 * base let through unchecked would reach outside. It has a workspace at {@code /ws} and a secret at
 * {@code /etc/secret} outside it.
 */
class RemoteWorkspaceFilesTest {

    private static final String ROOT = "/ws";

    private Remote remote;
    private MemoryFiles files;

    @BeforeEach
    void setUp() {
        remote = new Remote();
        remote.dir("/ws");
        remote.dir("/ws/d");
        remote.file("/ws/d/f.txt", "inside");
        remote.dir("/etc");
        remote.file("/etc/secret", "secret");
        files = new MemoryFiles(remote);
    }

    @Test
    void should_follow_a_link_inside_the_workspace_when_resolving_and_reading() {
        remote.link("/ws/in", "d");
        assertThat(files.resolve("in/f.txt")).isEqualTo("d/f.txt");
        assertThat(files.resolve("in")).isEqualTo("d");
        assertThat(text(files.read("in/f.txt", 0, 100))).isEqualTo("inside");
        assertThat(files.stat("in")).map(FileEntry::type).contains(EntryType.LINK);
    }

    @Test
    void should_refuse_every_operation_through_a_link_that_leads_outside() {
        remote.link("/ws/out", "/etc");
        remote.link("/ws/d/up", "../../etc/secret");

        assertThatThrownBy(() -> files.resolve("out/secret")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.read("out/secret", 0, 100)).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.read("d/up", 0, 100)).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.stat("out/secret")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.write("out/planted", bytes("x"), 0644))
                .isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.mkdirs("out/sub")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.delete("out/secret")).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.walk("out", e -> WorkspaceFiles.WalkAction.CONTINUE))
                .isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.export(List.of("d/up"), (p, size, in) -> true))
                .isInstanceOf(PathEscapeException.class);

        assertThat(remote.text("/etc/secret")).isEqualTo("secret");
        assertThat(remote.nodes).doesNotContainKeys("/etc/planted", "/etc/sub");
        // Its existence is not a read through it: stat reports the link itself.
        assertThat(files.stat("out")).map(FileEntry::type).contains(EntryType.LINK);
    }

    @Test
    void should_refuse_a_link_loop_and_a_dangling_link() {
        remote.link("/ws/a", "b");
        remote.link("/ws/b", "a");
        remote.link("/ws/gone", "missing");

        assertThatThrownBy(() -> files.resolve("a/x")).isInstanceOf(PathEscapeException.class)
                .hasMessageContaining("does not resolve");
        assertThatThrownBy(() -> files.read("a", 0, 10)).isInstanceOf(PathEscapeException.class);
        assertThatThrownBy(() -> files.resolve("gone")).isInstanceOf(PathEscapeException.class)
                .hasMessageContaining("does not resolve");
        assertThatThrownBy(() -> files.write("gone/x", bytes("x"), 0644)).isInstanceOf(PathEscapeException.class);
    }

    @Test
    void should_refuse_a_link_whose_reported_target_is_itself_a_link() {
        remote.dir("/ws/real");
        remote.link("/ws/second", "real");
        // A remote side that reported a target it did not evaluate to the end.
        remote.unevaluated.put("/ws/first", "/ws/second");
        remote.link("/ws/first", "second");

        assertThatThrownBy(() -> files.resolve("first/x")).isInstanceOf(PathEscapeException.class);
        assertThat(files.resolve("second/x")).isEqualTo("real/x");
    }

    @Test
    void should_refuse_dot_dot_and_absolute_paths_whoever_calls() {
        for (String bad : List.of("../ws/d/f.txt", "d/../../etc/secret", "/etc/secret", "d/./f.txt", "d//f.txt",
                "d/f.txt\0")) {
            assertThatThrownBy(() -> files.resolve(bad)).as(bad).isInstanceOf(PathEscapeException.class);
            assertThatThrownBy(() -> files.read(bad, 0, 10)).as(bad).isInstanceOf(PathEscapeException.class);
            assertThatThrownBy(() -> files.write(bad, bytes("x"), 0644)).as(bad)
                    .isInstanceOf(PathEscapeException.class);
            assertThatThrownBy(() -> files.delete(bad)).as(bad).isInstanceOf(PathEscapeException.class);
        }
        assertThat(remote.text("/etc/secret")).isEqualTo("secret");
        assertThat(text(files.read("d/f.txt", 0, 10))).isEqualTo("inside");
    }

    @Test
    void should_replace_a_link_at_the_last_component_when_writing_and_delete_the_link_itself() {
        remote.link("/ws/d/to-secret", "/etc/secret");

        files.write("d/to-secret", bytes("mine"), 0644);
        assertThat(remote.text("/ws/d/to-secret")).isEqualTo("mine");
        assertThat(remote.text("/etc/secret")).isEqualTo("secret");

        remote.link("/ws/d/to-etc", "/etc");
        new MemoryFiles(remote).delete("d/to-etc");
        assertThat(remote.nodes).doesNotContainKey("/ws/d/to-etc").containsKey("/etc/secret");
    }

    @Test
    void should_create_missing_parents_when_writing_and_refuse_a_component_that_is_a_file() {
        files.writeAll(List.of(PutFile.of("n/e/w.txt", bytes("1")), PutFile.of("d/g.txt", bytes("2"))));
        assertThat(remote.text("/ws/n/e/w.txt")).isEqualTo("1");
        assertThat(remote.nodes.get("/ws/n/e").type()).isEqualTo(EntryType.DIRECTORY);
        assertThat(remote.text("/ws/d/g.txt")).isEqualTo("2");

        assertThatThrownBy(() -> files.write("d/f.txt/x", bytes("x"), 0644))
                .isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> files.write("d", bytes("x"), 0644)).isInstanceOf(InvalidSpecException.class)
                .hasMessageContaining("is a directory");
        assertThatThrownBy(() -> files.write(".", bytes("x"), 0644)).isInstanceOf(InvalidSpecException.class);
        assertThat(remote.nodes.get("/ws/d").type()).isEqualTo(EntryType.DIRECTORY);
    }

    @Test
    void should_check_every_path_of_a_batch_before_writing_any() {
        assertThatThrownBy(() -> files.writeAll(List.of(PutFile.of("ok.txt", bytes("1")),
                PutFile.of("../escape", bytes("2"))))).isInstanceOf(PathEscapeException.class);
        assertThat(remote.nodes).doesNotContainKey("/ws/ok.txt");
    }

    @Test
    void should_walk_in_pre_order_skipping_subtrees_and_stopping_when_asked() {
        remote.dir("/ws/d/skip");
        remote.file("/ws/d/skip/hidden", "h");
        remote.dir("/ws/d/sub");
        remote.file("/ws/d/sub/z", "z");
        remote.link("/ws/d/sub/out", "/etc");

        List<String> seen = new ArrayList<>();
        files.walk("d", e -> {
            seen.add(e.path() + ":" + e.type());
            return e.path().equals("d/skip") ? WorkspaceFiles.WalkAction.SKIP_SUBTREE
                    : WorkspaceFiles.WalkAction.CONTINUE;
        });
        assertThat(seen).containsExactlyInAnyOrder("d/f.txt:FILE", "d/skip:DIRECTORY", "d/sub:DIRECTORY",
                "d/sub/z:FILE", "d/sub/out:LINK");
        assertThat(seen.indexOf("d/sub:DIRECTORY")).isLessThan(seen.indexOf("d/sub/z:FILE"));

        List<String> first = new ArrayList<>();
        files.walk(".", e -> {
            first.add(e.path());
            return WorkspaceFiles.WalkAction.STOP;
        });
        assertThat(first).hasSize(1);
    }

    @Test
    void should_report_a_gone_workspace_and_never_recreate_it() {
        remote.nodes.keySet().removeIf(k -> k.startsWith("/ws"));

        assertThatThrownBy(() -> files.stat(".")).isInstanceOf(WorkspaceGoneException.class);
        assertThatThrownBy(() -> files.stat("a/b")).isInstanceOf(WorkspaceGoneException.class);
        assertThatThrownBy(() -> files.write("a/b", bytes("x"), 0644)).isInstanceOf(WorkspaceGoneException.class);
        assertThat(remote.nodes).doesNotContainKeys("/ws", "/ws/a");
    }

    @Test
    void should_report_missing_paths_as_empty_when_stat() {
        assertThat(files.stat("nothing")).isEmpty();
        assertThat(files.stat("d/f.txt/below")).isEmpty();
        assertThat(files.stat("d/f.txt")).map(FileEntry::size).contains(6L);
        assertThat(files.stat(".")).map(FileEntry::type).contains(EntryType.DIRECTORY);
    }

    // ------------------------------------------------------------------ the in-memory remote side

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(FileWindow w) {
        return new String(w.content(), StandardCharsets.UTF_8);
    }

    /** A file system of absolute paths; links are evaluated to the end as Docker's and envd's stat report them. */
    static final class Remote {
        final Map<String, Node> nodes = new TreeMap<>();
        /** Link targets reported as given, not evaluated. */
        final Map<String, String> unevaluated = new TreeMap<>();

        record Node(EntryType type, byte[] content, String link) {
        }

        void dir(String p) {
            nodes.put(p, new Node(EntryType.DIRECTORY, null, null));
        }

        void file(String p, String text) {
            nodes.put(p, new Node(EntryType.FILE, bytes(text), null));
        }

        void link(String p, String target) {
            nodes.put(p, new Node(EntryType.LINK, null, target));
        }

        String text(String p) {
            return new String(nodes.get(p).content(), StandardCharsets.UTF_8);
        }

        /** The absolute path with every link evaluated, or null for a loop. */
        String evaluate(String abs, int depth) {
            if (depth > 40) {
                return null;
            }
            List<String> cur = new ArrayList<>();
            for (String seg : abs.substring(1).split("/")) {
                if (seg.equals("..")) {
                    if (!cur.isEmpty()) {
                        cur.remove(cur.size() - 1);
                    }
                    continue;
                }
                String cand = "/" + String.join("/", cur) + (cur.isEmpty() ? "" : "/") + seg;
                Node n = nodes.get(cand);
                if (n != null && n.type() == EntryType.LINK) {
                    String t = n.link().startsWith("/") ? n.link()
                            : cand.substring(0, cand.lastIndexOf('/')) + "/" + n.link();
                    String r = evaluate(t, depth + 1);
                    if (r == null) {
                        return null;
                    }
                    cur = new ArrayList<>(Arrays.asList(r.substring(1).split("/")));
                } else {
                    cur.add(seg);
                }
            }
            return "/" + String.join("/", cur);
        }
    }

    /** The base over {@link Remote}. */
    static final class MemoryFiles extends RemoteWorkspaceFiles {
        private final Remote remote;

        MemoryFiles(Remote remote) {
            super(ROOT);
            this.remote = remote;
        }

        /** Where the remote side finds {@code rel}: links among its parents followed, the last component not. */
        private String real(String rel) {
            String a = abs(rel);
            int slash = a.lastIndexOf('/');
            String parent = slash == 0 ? "" : remote.evaluate(a.substring(0, slash), 0);
            return (parent == null ? "/nowhere" : parent) + a.substring(slash);
        }

        @Override
        protected Optional<RemoteEntry> lstat(String rel) {
            Remote.Node n = remote.nodes.get(real(rel));
            if (n == null) {
                return Optional.empty();
            }
            if (n.type() == EntryType.LINK) {
                String target = remote.unevaluated.containsKey(real(rel)) ? remote.unevaluated.get(real(rel))
                        : remote.evaluate(real(rel), 0);
                return Optional.of(new RemoteEntry(EntryType.LINK, 0, 0777, Instant.EPOCH, target, null));
            }
            return Optional.of(RemoteEntry.of(n.type(), n.content() == null ? 0 : n.content().length, 0644,
                    Instant.EPOCH));
        }

        @Override
        protected void list(String dir, ListVisitor visitor) {
            String prefix = real(dir) + "/";
            for (Map.Entry<String, Remote.Node> e : new TreeMap<>(remote.nodes).entrySet()) {
                if (e.getKey().startsWith(prefix)) {
                    Remote.Node n = e.getValue();
                    if (!visitor.entry(e.getKey().substring(prefix.length()), RemoteEntry.of(n.type(),
                            n.content() == null ? 0 : n.content().length, 0644, Instant.EPOCH))) {
                        return;
                    }
                }
            }
        }

        @Override
        protected FileWindow readFile(String path, long offset, int maxBytes) {
            byte[] c = remote.nodes.get(real(regularFile(path))).content();
            int from = (int) Math.min(offset, c.length);
            return new FileWindow(Arrays.copyOfRange(c, from, Math.min(c.length, from + maxBytes)), c.length);
        }

        @Override
        protected boolean exportFile(String path, ExportVisitor visitor) {
            byte[] c = remote.nodes.get(real(regularFile(path))).content();
            try {
                return visitor.file(path, c.length, new java.io.ByteArrayInputStream(c));
            } catch (java.io.IOException e) {
                throw new InvalidSpecException("'" + path + "' could not be read", e);
            }
        }

        @Override
        protected void makeDirs(String dir, List<String> names, String asked) {
            for (String n : names) {
                remote.dir(real(RelativePaths.join(dir, n)));
            }
        }

        @Override
        protected void writeFiles(List<WriteTarget> targets) {
            for (WriteTarget t : targets) {
                Remote.Node n = remote.nodes.get(real(t.target()));
                if (n != null && n.type() == EntryType.DIRECTORY) {
                    throw new InvalidSpecException("'" + t.file().path() + "' is a directory");
                }
                remote.nodes.put(real(t.target()), new Remote.Node(EntryType.FILE, t.file().content(), null));
            }
        }

        @Override
        protected void remove(String target, String asked) {
            String a = real(target);
            remote.nodes.keySet().removeIf(k -> k.equals(a) || k.startsWith(a + "/"));
        }

        @Override
        protected void importInto(ImportSource source, String parent, String target, String to,
                                  boolean readOnly) {
            throw new UnsupportedOperationException();
        }
    }
}
