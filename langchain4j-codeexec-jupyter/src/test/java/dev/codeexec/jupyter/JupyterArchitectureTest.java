package dev.codeexec.jupyter;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The Jupyter backend builds on the engine contract and the SPI (its host family included) alone, and takes
 * environments from the engine. See "Layers" in {@code docs/backend-authors.md}.
 */
@AnalyzeClasses(packages = "dev.codeexec.jupyter", importOptions = ImportOption.DoNotIncludeTests.class)
class JupyterArchitectureTest {

    @ArchTest
    static final ArchRule jupyter_does_not_depend_on_the_adapter = noClasses()
            .that().resideInAPackage("dev.codeexec.jupyter..")
            .should().dependOnClassesThat().resideInAPackage("dev.codeexec.langchain4j..")
            .because("backends implement the engine contract; the adapter builds on them, not the other way round");

    @ArchTest
    static final ArchRule jupyter_does_not_depend_on_langchain4j = noClasses()
            .that().resideInAPackage("dev.codeexec.jupyter..")
            .should().dependOnClassesThat().resideInAPackage("dev.langchain4j..")
            .because("the backend is usable without LangChain4j");

    @ArchTest
    static final ArchRule jupyter_builds_on_the_api_and_the_spi = noClasses()
            .that().resideInAPackage("dev.codeexec.jupyter..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.codeexec.internal..", "dev.codeexec.local..",
                    "dev.codeexec.sandbox..", "dev.codeexec.container..", "dev.codeexec.e2b..")
            .because("kernels are host processes started through the host-family SPI (dev.codeexec.spi.host); "
                    + "internal code serves the core alone, and backends never use each other");

    @ArchTest
    static final ArchRule kernels_get_their_environment_from_the_engine = noClasses()
            .that().resideInAPackage("dev.codeexec.jupyter..")
            .should().callMethod(System.class, "getenv")
            .orShould().dependOnClassesThat().belongToAnyOf(ProcessBuilder.class)
            .because("a kernel's environment, and so every cell's, comes from the engine's policy (RunEnvironment) "
                    + "and processes start through the core's host channel, which inherits nothing from the JVM");

    @ArchTest
    static final ArchRule only_the_engine_is_public = noClasses()
            .that().resideInAPackage("dev.codeexec.jupyter..")
            .and().doNotHaveFullyQualifiedName(JupyterEngine.class.getName())
            .and().doNotHaveFullyQualifiedName(JupyterEngine.Builder.class.getName())
            .and().doNotHaveFullyQualifiedName(BoundaryKernels.class.getName())
            .and().doNotHaveFullyQualifiedName(KernelLauncher.class.getName())
            .and().doNotHaveFullyQualifiedName(KernelOptions.class.getName())
            .and().doNotHaveFullyQualifiedName(KernelOptions.Builder.class.getName())
            .should().bePublic()
            .because("the kernel client, wire format, relay and cell handling are implementation details; other "
                    + "engines compose BoundaryKernels");
}
