package dev.codeexec.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a {@link MissingBackendModuleException} as Spring Boot's "APPLICATION FAILED TO START" report: what is
 * missing, and the dependency to add in Maven's and Gradle's form. Registered in {@code META-INF/spring.factories}.
 */
class MissingBackendModuleFailureAnalyzer extends AbstractFailureAnalyzer<MissingBackendModuleException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, MissingBackendModuleException cause) {
        String[] coordinates = cause.module().split(":", 2);
        String description = "codeexec.backend=" + cause.backend() + " needs the module " + cause.module()
                + ", which is not on the class path. The starter declares each backend as an optional dependency, so "
                + "the application adds the one it uses.";
        String action = "Add the backend's module to your build, its version from dev.codeexec:langchain4j-codeexec-bom "
                + "(or the starter's version):\n\n"
                + "    <dependency>\n"
                + "      <groupId>" + coordinates[0] + "</groupId>\n"
                + "      <artifactId>" + coordinates[1] + "</artifactId>\n"
                + "    </dependency>\n\n"
                + "or, with Gradle, implementation '" + cause.module() + "'. Or set codeexec.backend to a backend "
                + "whose module the application has.";
        return new FailureAnalysis(description, action, cause);
    }
}
