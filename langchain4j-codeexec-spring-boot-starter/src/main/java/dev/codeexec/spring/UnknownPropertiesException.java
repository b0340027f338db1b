package dev.codeexec.spring;

import java.util.List;

/**
 * Keys under {@code codeexec} that no property binds, set in the application's own property sources (never their
 * values, which may be secrets). {@link UnknownPropertiesFailureAnalyzer} turns it into Spring Boot's short start-up
 * report; {@code codeexec.ignore-unknown-properties=true} makes them warnings instead.
 */
final class UnknownPropertiesException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final transient List<UnknownProperties.Unknown> unknown;

    UnknownPropertiesException(List<UnknownProperties.Unknown> unknown) {
        super(message(unknown));
        this.unknown = List.copyOf(unknown);
    }

    /** The unknown keys, in name order. */
    List<UnknownProperties.Unknown> unknown() {
        return unknown;
    }

    private static String message(List<UnknownProperties.Unknown> unknown) {
        StringBuilder b = new StringBuilder(unknown.size() == 1 ? "Unknown codeexec property" : "Unknown codeexec "
                + "properties").append(" (no property of the starter binds ").append(unknown.size() == 1 ? "it" : "them")
                .append(", so ").append(unknown.size() == 1 ? "it would be" : "they would be")
                .append(" silently ignored):");
        for (UnknownProperties.Unknown u : unknown) {
            b.append("\n    ").append(u.describe());
        }
        return b.toString();
    }
}
