package dev.codeexec.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports an {@link UnknownPropertiesException} as Spring Boot's "APPLICATION FAILED TO START" report: each unknown
 * key, where it is set, the nearest property, and the way to only warn. Registered in {@code META-INF/spring.factories}.
 */
class UnknownPropertiesFailureAnalyzer extends AbstractFailureAnalyzer<UnknownPropertiesException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, UnknownPropertiesException cause) {
        String action = "Correct or remove " + (cause.unknown().size() == 1 ? "the key" : "these keys") + ": "
                + "docs/spring-boot.md lists every codeexec property, and IDEs complete them from the starter's "
                + "configuration metadata. To log unknown keys as warnings instead of stopping the start-up, set "
                + "codeexec.ignore-unknown-properties=true.";
        return new FailureAnalysis(cause.getMessage(), action, cause);
    }
}
