package dev.codeexec.sandbox;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.simpleName;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The sandbox backend builds on the engine contract and the SPI alone, checked on its main classes (the CLI included,
 * which sits on top of the engine). See "Layers" in {@code docs/backend-authors.md}.
 */
@AnalyzeClasses(packages = "dev.codeexec.sandbox", importOptions = ImportOption.DoNotIncludeTests.class)
class SandboxArchitectureTest {

    @ArchTest
    static final ArchRule sandbox_does_not_depend_on_the_adapter = noClasses()
            .that().resideInAPackage("dev.codeexec.sandbox..")
            .should().dependOnClassesThat().resideInAPackage("dev.codeexec.langchain4j..")
            .because("backends implement the engine contract; the adapter builds on them, not the other way round");

    @ArchTest
    static final ArchRule sandbox_does_not_depend_on_langchain4j = noClasses()
            .that().resideInAPackage("dev.codeexec.sandbox..")
            .should().dependOnClassesThat().resideInAPackage("dev.langchain4j..")
            .because("the backend is usable without LangChain4j, and the CLI jar leaves it out");

    @ArchTest
    static final ArchRule sandbox_builds_on_the_api_and_the_spi = noClasses()
            .that().resideInAPackage("dev.codeexec.sandbox..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.codeexec.internal..", "dev.codeexec.local..",
                    "dev.codeexec.container..", "dev.codeexec.e2b..")
            .because("the sandbox starts its runs through the host-family SPI (dev.codeexec.spi.host); internal code "
                    + "serves the core alone, and backends never use each other");

    @ArchTest
    static final ArchRule sandbox_uses_only_the_kernel_api_of_the_jupyter_module = noClasses()
            .that().resideInAPackage("dev.codeexec.sandbox..")
            .should().dependOnClassesThat(resideInAPackage("dev.codeexec.jupyter..")
                    .and(not(simpleName("BoundaryKernels").or(simpleName("KernelOptions"))
                            .or(simpleName("KernelLauncher")))))
            .because("python kernels inside the sandbox are the jupyter module's BoundaryKernels, started through "
                    + "the engine's own run planning; the Jupyter engine itself is another backend");

    @ArchTest
    static final ArchRule the_engine_does_not_depend_on_its_cli = noClasses()
            .that().resideInAPackage("dev.codeexec.sandbox")
            .should().dependOnClassesThat().resideInAPackage("dev.codeexec.sandbox.cli..")
            .because("the CLI is a user of the engine, layered on top of it");
}
