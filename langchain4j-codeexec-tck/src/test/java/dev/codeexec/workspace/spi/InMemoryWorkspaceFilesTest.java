package dev.codeexec.workspace.spi;

import dev.codeexec.tck.WorkspaceFilesContractTest;
import java.util.Map;

/** The contract on a provider without host paths: what a remote backend's primitives must also pass. */
class InMemoryWorkspaceFilesTest extends WorkspaceFilesContractTest {

    private static final Map<String, String> OUTSIDE = Map.of("/outside/file.txt", SECRET,
            "/outside/dir/secret.txt", SECRET);

    InMemoryWorkspaceFiles.Store store;

    @Override
    protected void createWorkspace() {
        store = new InMemoryWorkspaceFiles.Store();
        store.outside.putAll(OUTSIDE);
    }

    @Override
    protected WorkspaceFiles files() {
        return new InMemoryWorkspaceFiles(store);
    }

    @Override
    protected void createLink(String path, String target) {
        new InMemoryWorkspaceFiles(store).mkdirs(path.contains("/") ? path.substring(0, path.lastIndexOf('/')) : ".");
        store.link(path, switch (target) {
            case OUTSIDE_FILE -> "/outside/file.txt";
            case OUTSIDE_DIR -> "/outside/dir";
            case MISSING -> "work/no-such-target";
            default -> target;
        });
    }

    @Override
    protected boolean outsideIntact() {
        return store.outside.equals(OUTSIDE);
    }

    @Override
    protected void removeWorkspace() {
        store.remove();
    }

    @Override
    protected boolean supportsSpecialFiles() {
        return true;
    }

    @Override
    protected void createFifo(String path) {
        store.special(path);
    }

    @Override
    protected String location() {
        return "/remote/workspaces/contract";
    }
}
