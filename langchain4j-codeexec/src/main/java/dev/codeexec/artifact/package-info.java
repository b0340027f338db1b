/**
 * Artifacts: durable, versioned files that outlive workspaces, referred to as {@code artifact://name@version}.
 *
 * <p>Start with {@link dev.codeexec.artifact.ArtifactService} (the contract) and
 * {@link dev.codeexec.artifact.FileSystemArtifactService#at(java.nio.file.Path)} (the durable default);
 * {@link dev.codeexec.artifact.InMemoryArtifactService} is for tests. {@link dev.codeexec.artifact.ArtifactRef}
 * parses references. This package does not depend on LangChain4j.
 */
package dev.codeexec.artifact;
