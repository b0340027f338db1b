package dev.codeexec.engine;

import java.util.Set;

/**
 * How far a bounded listing goes ({@link WorkspaceFS#list(Workspace, String, ListOptions)}): a listing stops walking
 * once it has found one entry more than {@code maxEntries}, so its cost is bounded by the limit, not by the size of the
 * tree, and it reports whether anything was left out.
 *
 * @param maxEntries      the most entries returned; at least 1
 * @param maxDepth        how many levels below the listed directory (or a glob's fixed base) are listed: 1 lists a
 *                        directory's own entries, 2 also theirs; 0 for no limit
 * @param withoutContents directories, as normalised workspace-relative paths ({@code runs}, {@code work/cache}), that
 *                        are listed themselves but whose contents are not, unless the listing starts at or below one
 *                        of them (listing {@code runs} itself lists its contents)
 */
public record ListOptions(int maxEntries, int maxDepth, Set<String> withoutContents) {

    public ListOptions {
        if (maxEntries < 1) {
            throw new InvalidSpecException("maxEntries (" + maxEntries + ") must be at least 1");
        }
        if (maxDepth < 0) {
            throw new InvalidSpecException("maxDepth (" + maxDepth + ") must not be negative (0 means no limit)");
        }
        withoutContents = withoutContents == null ? Set.of() : Set.copyOf(withoutContents);
    }

    /** At most {@code maxEntries} entries, at any depth, every directory descended into. */
    public static ListOptions maxEntries(int maxEntries) {
        return new ListOptions(maxEntries, 0, Set.of());
    }

    /** A copy that lists at most {@code maxDepth} levels (0: no limit). */
    public ListOptions withMaxDepth(int maxDepth) {
        return new ListOptions(maxEntries, maxDepth, withoutContents);
    }

    /** A copy that does not list what these directories contain (they are still listed themselves). */
    public ListOptions withoutContents(String... directories) {
        return new ListOptions(maxEntries, maxDepth, Set.of(directories));
    }
}
