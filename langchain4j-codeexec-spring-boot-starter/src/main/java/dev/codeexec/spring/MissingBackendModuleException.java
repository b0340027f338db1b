package dev.codeexec.spring;

/**
 * {@code codeexec.backend} names a backend whose module is not on the class path (the starter declares the backends as
 * optional dependencies, so the application adds the one it uses). {@link MissingBackendModuleFailureAnalyzer} turns
 * it into Spring Boot's short start-up report with the dependency to add.
 */
final class MissingBackendModuleException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final String backend;
    private final String module;

    MissingBackendModuleException(String backend, String module) {
        super("codeexec.backend=" + backend + " needs the module " + module + " on the class path, and it is not "
                + "there: add it as a dependency (the starter declares the backends as optional dependencies)");
        this.backend = backend;
        this.module = module;
    }

    /** The value of {@code codeexec.backend}, such as {@code sandbox}. */
    String backend() {
        return backend;
    }

    /** The module's Maven coordinates, {@code groupId:artifactId}. */
    String module() {
        return module;
    }
}
