package dev.codeexec.engine;

import dev.codeexec.FileRef;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The files collected by {@link WorkspaceFS#collectOutputs}.
 *
 * @param files     collected files, sorted by path
 * @param limitsHit the limits that cut the collection short; empty when everything was collected whole
 */
public record OutputManifest(List<FileRef> files, Set<OutputLimit> limitsHit) {

    public OutputManifest {
        files = files == null ? List.of() : List.copyOf(files);
        limitsHit = limitsHit == null || limitsHit.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(limitsHit));
    }

    /** True when any limit was hit. */
    public boolean anyLimitHit() {
        return !limitsHit.isEmpty();
    }
}
