package dev.codeexec.sandbox;

import dev.codeexec.engine.InvalidSpecException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Keeps host-wide kernel and device state out of reach of a sandbox: a write grant at or below {@code /proc},
 * {@code /sys} or {@code /dev} is refused, and kernel interface file systems the host mounted below a writable bind
 * are remounted read-only, since the bind would otherwise carry them writable into the sandbox. Separate from
 * {@link SandboxLayout} because these rules hold whatever the profile says.
 */
final class KernelGuards {

    private KernelGuards() {
    }

    /** A writable bind at or below /proc, /sys or /dev would let a program change the host's kernel or devices. */
    static void refuseWritableKernelTrees(Map<String, LayoutEntry> entries) {
        entries.forEach((path, e) -> {
            if (e.kind == Mount.Kind.BIND) {
                for (String k : SandboxLayout.KERNEL_TREES) {
                    if (LayoutPaths.isAtOrBelow(path, k)) {
                        throw new InvalidSpecException("write grant '" + (e.rule == null ? path : e.rule)
                                + "' resolves into " + k + ", whose files change host-wide kernel or device "
                                + "settings; nothing in a sandbox may write there");
                    }
                }
            }
        });
    }

    /**
     * Kernel interface file systems the host mounted below a writable bind (outside the sandbox root: the engine's
     * workspaces hold none) are remounted read-only: the bind would otherwise carry them writable into the sandbox.
     */
    static void remountKernelFileSystems(Map<String, LayoutEntry> entries, Path sandboxRoot) {
        List<String> writable = new ArrayList<>();
        entries.forEach((path, e) -> {
            if (e.kind == Mount.Kind.BIND && !LayoutPaths.isAtOrBelow(path, sandboxRoot.toString())) {
                writable.add(path);
            }
        });
        if (writable.isEmpty()) {
            return;
        }
        for (String[] m : HostMounts.read()) {
            String point = m[0];
            if (!SandboxLayout.KERNEL_FILE_SYSTEMS.contains(m[1]) || entries.containsKey(point)) {
                continue;
            }
            for (String w : writable) {
                if (LayoutPaths.isAtOrBelow(point, w)) {
                    entries.put(point, new LayoutEntry(Mount.Kind.REMOUNT_RO, null));
                    break;
                }
            }
        }
    }
}
