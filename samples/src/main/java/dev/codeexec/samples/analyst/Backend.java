package dev.codeexec.samples.analyst;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The backends the chatbot can run on, by the name {@code --backend} takes. */
public enum Backend {

    /** bubblewrap (Linux) or Seatbelt (macOS): the default where its preflight passes. */
    SANDBOX,
    /** This host, as this user: no isolation. The fallback when the sandbox cannot run. */
    LOCAL,
    /** A Docker (or Podman) container per workspace, from a locally present image. */
    CONTAINER,
    /** A Jupyter kernel (ipykernel) per workspace: state across cells, no isolation. */
    JUPYTER,
    /** An E2B cloud sandbox per workspace. */
    E2B,
    /** A hardened pod per workspace on the Kubernetes cluster of the current kubeconfig (or in-cluster). */
    KUBERNETES;

    /** The flag value: {@code sandbox}, {@code local}, ... */
    public String flag() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The backend a flag value names.
     *
     * @throws IllegalArgumentException naming the valid values
     */
    public static Backend fromFlag(String value) {
        for (Backend b : values()) {
            if (b.flag().equals(value == null ? "" : value.trim().toLowerCase(Locale.ROOT))) {
                return b;
            }
        }
        throw new IllegalArgumentException("unknown backend '" + value + "'; use one of " + flags());
    }

    /** {@code sandbox|local|container|jupyter|e2b|kubernetes}. */
    public static String flags() {
        return Arrays.stream(values()).map(Backend::flag).collect(Collectors.joining("|"));
    }
}
