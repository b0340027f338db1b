package dev.codeexec.e2b;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import java.util.Set;

/**
 * The E2B backend builds on the engine contract and the SPI alone (not the host family), and shows only its API. See
 * "Layers" in {@code docs/backend-authors.md}.
 */
@AnalyzeClasses(packages = "dev.codeexec.e2b", importOptions = ImportOption.DoNotIncludeTests.class)
class E2bArchitectureTest {

    /** The public types: the engine, the control plane and its values, the configuration, the exceptions. */
    static final Set<Class<?>> API = Set.of(E2bEngine.class, E2bEngine.Builder.class, WorkspaceMode.class,
            E2bControlPlane.class, E2bConfig.class, E2bConfig.Builder.class, SandboxSpec.class,
            SandboxSpec.Builder.class, E2bSandbox.class, E2bError.class, E2bApiException.class,
            E2bAuthenticationException.class, E2bRateLimitException.class, E2bTemplateNotFoundException.class,
            E2bProtocolException.class, E2bConflictException.class, E2bSandboxGoneException.class);

    @ArchTest
    static final ArchRule e2b_does_not_depend_on_the_adapter = noClasses()
            .that().resideInAPackage("dev.codeexec.e2b..")
            .should().dependOnClassesThat().resideInAPackage("dev.codeexec.langchain4j..")
            .because("backends implement the engine contract; the adapter builds on them, not the other way round");

    @ArchTest
    static final ArchRule e2b_does_not_depend_on_langchain4j = noClasses()
            .that().resideInAPackage("dev.codeexec.e2b..")
            .should().dependOnClassesThat().resideInAPackage("dev.langchain4j..")
            .because("the backend is usable without LangChain4j");

    @ArchTest
    static final ArchRule e2b_does_not_use_the_host_plumbing = noClasses()
            .that().resideInAPackage("dev.codeexec.e2b..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.codeexec.internal..", "dev.codeexec.spi.host..")
            .because("programs run in a remote sandbox, not on this host: the host-family SPI is not for this "
                    + "backend, and internal code serves the core alone");

    @ArchTest
    static final ArchRule e2b_does_not_depend_on_another_backend = noClasses()
            .that().resideInAPackage("dev.codeexec.e2b..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.codeexec.local..", "dev.codeexec.sandbox..",
                    "dev.codeexec.container..", "dev.codeexec.jupyter..")
            .because("backends share code through the core's SPI, never through each other");

    @ArchTest
    static final ArchRule only_the_api_is_public = noClasses()
            .that().resideInAPackage("dev.codeexec.e2b..")
            .and(DescribedPredicate.describe("are not API", (JavaClass c) -> API.stream()
                    .noneMatch(a -> a.getName().equals(c.getName()))))
            .should().bePublic()
            .because("the HTTP transport, the Connect codec, envd's calls and the fake's seams are implementation "
                    + "details");
}
