package dev.codeexec.engine;

/**
 * An input to stage into a workspace before a run.
 *
 * @param from where the bytes come from: {@code artifact://name[@version]}, {@code workspace://relative/path}, or
 *             {@code host:///absolute/path} (also a bare absolute path), the last only under an input root the
 *             engine was configured with
 * @param to   workspace-relative destination; null means {@code work/inputs/<name>}
 */
public record InputSpec(String from, String to) {

    public InputSpec {
        if (from == null || from.isBlank()) {
            throw new InvalidSpecException("input 'from' must not be null or blank");
        }
    }

    /** Stage {@code from} to its default place under {@code work/inputs/}. */
    public static InputSpec of(String from) {
        return new InputSpec(from, null);
    }

    /** Stage {@code from} to {@code to}. */
    public static InputSpec of(String from, String to) {
        return new InputSpec(from, to);
    }
}
