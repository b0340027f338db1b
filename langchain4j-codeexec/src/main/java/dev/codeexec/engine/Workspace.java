package dev.codeexec.engine;

import java.util.Objects;

/**
 * A handle on one workspace of one engine. The layout inside it is fixed: {@code work/inputs/}, {@code work/},
 * {@code out/}, {@code runs/}, {@code skills/}, {@code home/}, {@code tmp/}.
 *
 * @param id   the engine's identifier of the workspace (safe characters only)
 * @param path the workspace root as the backend sees it: a host directory for local and sandbox, a directory inside
 *             the container or sandbox VM otherwise. Never shown to a model.
 */
public record Workspace(String id, String path) {

    public Workspace {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(path, "path");
    }
}
