package dev.codeexec.workspace.spi;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.workspace.PathResolver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * {@link WorkspaceFiles} over a map, with symbolic links: a provider that has no host path at all, as a remote backend
 * has none. Link targets are workspace-relative (from the root), or absolute for something outside the workspace,
 * which lives in {@link Store#outside} and must never be reached. It proves the SPI can be implemented without the
 * host file system, and lets core rules be tested on a backend that is not a host directory.
 */
public final class InMemoryWorkspaceFiles implements WorkspaceFiles {

    /** Links followed in a row before a path is refused, as the kernel's limit (40) does. */
    private static final int MAX_LINKS = 40;

    /** One workspace's entries, shared by the instances obtained on it. */
    public static final class Store {
        final Map<String, Node> nodes = new TreeMap<>();
        /** Entries outside the workspace, by absolute name: never read, written or deleted. */
        public final Map<String, String> outside = new TreeMap<>();
        volatile boolean gone;

        public Store() {
            nodes.put(".", Node.dir(0755));
        }

        /** Plants a link, as a program in the workspace would; {@code target} is workspace-relative or absolute. */
        public synchronized void link(String path, String target) {
            nodes.put(PathResolver.normalize(path), new Node(EntryType.LINK, null, 0777, Instant.now(), target));
        }

        /** Plants a special file (a FIFO, say): reported as {@link EntryType#OTHER}, never opened. */
        public synchronized void special(String path) {
            nodes.put(PathResolver.normalize(path), new Node(EntryType.OTHER, null, 0644, Instant.now(), null));
        }

        /** Removes the workspace: every later instance throws {@link WorkspaceGoneException}. */
        public void remove() {
            gone = true;
        }
    }

    record Node(EntryType type, byte[] data, int mode, Instant modified, String target) {
        static Node dir(int mode) {
            return new Node(EntryType.DIRECTORY, null, mode, Instant.now(), null);
        }

        long size() {
            return data == null ? 0 : data.length;
        }
    }

    private final Store store;

    /** @throws WorkspaceGoneException when the store's workspace was removed */
    public InMemoryWorkspaceFiles(Store store) {
        if (store.gone) {
            throw new WorkspaceGoneException("the workspace no longer exists");
        }
        this.store = store;
    }

    @Override
    public String resolve(String path) {
        synchronized (store) {
            return resolve(PathResolver.normalize(path), 0);
        }
    }

    @Override
    public Optional<FileEntry> stat(String path) {
        synchronized (store) {
            String norm = PathResolver.normalize(path);
            Node n = store.nodes.get(norm.equals(".") ? "." : entry(norm));
            return n == null ? Optional.empty() : Optional.of(new FileEntry(norm, n.type(), n.size(), n.mode(),
                    n.modified()));
        }
    }

    @Override
    public void walk(String dir, WalkVisitor visitor) {
        List<FileEntry> children;
        String start;
        synchronized (store) {
            String norm = PathResolver.normalize(dir);
            start = resolve(norm, 0);
            Node n = store.nodes.get(start);
            if (n == null || n.type() != EntryType.DIRECTORY) {
                return;
            }
            children = children(start, norm.equals(".") ? "" : norm + "/");
        }
        walk(start, children, visitor);
    }

    private boolean walk(String real, List<FileEntry> children, WalkVisitor visitor) {
        for (FileEntry e : children) {
            WalkAction action = visitor.visit(e);
            if (action == WalkAction.STOP) {
                return false;
            }
            if (e.isDirectory() && action == WalkAction.CONTINUE) {
                String childReal = join(real, e.name());
                List<FileEntry> below;
                synchronized (store) {
                    below = children(childReal, e.path() + "/");
                }
                if (!walk(childReal, below, visitor)) {
                    return false;
                }
            }
        }
        return true;
    }

    @Override
    public FileWindow read(String path, long offset, int maxBytes) {
        if (offset < 0 || maxBytes < 0) {
            throw new InvalidSpecException("offset and maxBytes must not be negative");
        }
        synchronized (store) {
            byte[] data = regularFile(PathResolver.normalize(path));
            int start = (int) Math.min(offset, data.length);
            int len = Math.min(maxBytes, data.length - start);
            return new FileWindow(Arrays.copyOfRange(data, start, start + len), data.length);
        }
    }

    @Override
    public void export(List<String> paths, ExportVisitor visitor) {
        for (String path : paths) {
            byte[] data;
            synchronized (store) {
                data = regularFile(PathResolver.normalize(path));
            }
            try (InputStream in = new ByteArrayInputStream(data)) {
                if (!visitor.file(path, data.length, in)) {
                    return;
                }
            } catch (IOException e) {
                throw new InvalidSpecException("cannot read '" + PathResolver.normalize(path) + "'");
            }
        }
    }

    @Override
    public void write(String path, byte[] content, int mode) {
        synchronized (store) {
            String norm = PathResolver.normalize(path);
            if (norm.equals(".")) {
                throw new InvalidSpecException("cannot write the workspace root");
            }
            String target = join(mkdirs(parent(norm), norm), name(norm));
            Node old = store.nodes.get(target);
            if (old != null && old.type() == EntryType.DIRECTORY) {
                throw new InvalidSpecException("'" + norm + "' is a directory");
            }
            // One map update: a reader sees the old node or the new one. A link there is replaced.
            store.nodes.put(target, new Node(EntryType.FILE, content.clone(), mode, Instant.now(), null));
        }
    }

    @Override
    public void mkdirs(String path) {
        synchronized (store) {
            String norm = PathResolver.normalize(path);
            mkdirs(norm, norm);
        }
    }

    @Override
    public void delete(String path) {
        synchronized (store) {
            String norm = PathResolver.normalize(path);
            if (norm.equals(".")) {
                throw new InvalidSpecException("refusing to delete the workspace root");
            }
            removeTree(entry(norm));
        }
    }

    @Override
    public void importTree(ImportSource source, String to, boolean readOnly) {
        String norm = PathResolver.normalize(to);
        if (norm.equals(".")) {
            throw new InvalidSpecException("cannot stage onto the workspace root itself; name a destination");
        }
        synchronized (store) {
            resolve(parent(norm), 0); // refuse a parent that leaves before reading anything
        }
        // Collected apart and applied in one step: a failure leaves nothing, as a tar extracted elsewhere and moved.
        Map<String, Node> built = new TreeMap<>();
        try {
            source.forEach(new ImportSource.Visitor() {
                @Override
                public void directory(FileEntry dir) {
                    built.put(safe(dir.path()), Node.dir(readOnly ? 0555 : 0755));
                }

                @Override
                public void file(FileEntry file, InputStream content) throws IOException {
                    int mode = readOnly ? file.mode() & ~0222 : file.mode();
                    built.put(safe(file.path()), new Node(EntryType.FILE, content.readAllBytes(), mode,
                            file.modifiedTime(), null));
                }
            });
        } catch (IOException e) {
            throw new CodeExecException("could not stage into '" + norm + "': " + e.getClass().getSimpleName(), e);
        }
        synchronized (store) {
            String target = join(mkdirs(parent(norm), norm), name(norm));
            removeTree(target);
            built.forEach((rel, node) -> store.nodes.put(rel.equals(".") ? target : target + "/" + rel, node));
        }
    }

    // ---- internals (callers hold the store's lock) ----

    private String resolve(String norm, int depth) {
        if (norm.equals(".")) {
            return ".";
        }
        String cur = ".";
        String[] parts = norm.split("/");
        for (int i = 0; i < parts.length; i++) {
            String next = join(cur, parts[i]);
            Node n = store.nodes.get(next);
            if (n == null) {
                StringBuilder rest = new StringBuilder(next);
                for (int j = i + 1; j < parts.length; j++) {
                    rest.append('/').append(parts[j]);
                }
                return rest.toString();
            }
            cur = n.type() == EntryType.LINK ? follow(n, norm, depth) : next;
        }
        return cur;
    }

    private String follow(Node link, String requested, int depth) {
        if (link.target().startsWith("/")) {
            throw new PathEscapeException("path '" + requested + "' passes through a link that leads outside the "
                    + "workspace");
        }
        if (depth >= MAX_LINKS) {
            throw new PathEscapeException("path '" + requested + "' passes through too many links");
        }
        String real = resolve(PathResolver.normalize(link.target()), depth + 1);
        if (!store.nodes.containsKey(real)) {
            throw new PathEscapeException("path '" + requested + "' passes through a link that does not resolve");
        }
        return real;
    }

    /** The entry itself: parents resolved, last component not followed. */
    private String entry(String norm) {
        return join(resolve(parent(norm), 0), name(norm));
    }

    /** Creates directories component by component, following links inside; returns the resolved path. */
    private String mkdirs(String norm, String requested) {
        String cur = ".";
        if (norm.equals(".")) {
            return cur;
        }
        for (String part : norm.split("/")) {
            String next = join(cur, part);
            Node n = store.nodes.get(next);
            if (n == null) {
                store.nodes.put(next, Node.dir(0755));
            } else if (n.type() == EntryType.LINK) {
                next = follow(n, requested, 0);
                if (store.nodes.get(next).type() != EntryType.DIRECTORY) {
                    throw new InvalidSpecException("'" + next + "' is not a directory");
                }
            } else if (n.type() != EntryType.DIRECTORY) {
                throw new InvalidSpecException("'" + next + "' is not a directory");
            }
            cur = next;
        }
        return cur;
    }

    private byte[] regularFile(String norm) {
        Node n = store.nodes.get(resolve(norm, 0));
        if (n == null || n.type() != EntryType.FILE) {
            throw new InvalidSpecException("'" + norm + "' is not a regular file");
        }
        return n.data();
    }

    private List<FileEntry> children(String real, String prefix) {
        List<FileEntry> out = new ArrayList<>();
        String p = real.equals(".") ? "" : real + "/";
        store.nodes.forEach((k, n) -> {
            if (!k.equals(".") && k.startsWith(p) && k.indexOf('/', p.length()) < 0) {
                out.add(new FileEntry(prefix + k.substring(p.length()), n.type(), n.size(), n.mode(), n.modified()));
            }
        });
        return out;
    }

    private void removeTree(String real) {
        store.nodes.keySet().removeIf(k -> k.equals(real) || k.startsWith(real + "/"));
    }

    /** A source entry's relative name, refused when it is not a plain relative path. */
    private static String safe(String rel) {
        if (rel.equals(".")) {
            return rel;
        }
        for (String part : rel.split("/", -1)) {
            if (part.isEmpty() || part.equals(".") || part.equals("..")) {
                throw new PathEscapeException("an entry of the source being staged has an unsafe name");
            }
        }
        return rel;
    }

    private static String join(String dir, String name) {
        return dir.equals(".") ? name : dir + "/" + name;
    }

    private static String parent(String norm) {
        int slash = norm.lastIndexOf('/');
        return slash < 0 ? "." : norm.substring(0, slash);
    }

    private static String name(String norm) {
        return norm.substring(norm.lastIndexOf('/') + 1);
    }
}
