package dev.codeexec.engine;

/**
 * A listing entry of a workspace.
 *
 * @param path      workspace-relative path, with {@code /} separators
 * @param sizeBytes size in bytes (0 for a directory)
 * @param directory true for a directory
 */
public record FileInfo(String path, long sizeBytes, boolean directory) {
}
