package dev.codeexec.engine;

/**
 * What {@link WorkspaceFS#stageInputs} did for one {@link InputSpec}.
 *
 * @param from      the source as requested
 * @param to        the workspace-relative destination
 * @param version   the artifact version that was staged, or null for other sources
 * @param sizeBytes bytes written (for a directory, the sum of its files)
 */
public record StagedInput(String from, String to, Integer version, long sizeBytes) {
}
