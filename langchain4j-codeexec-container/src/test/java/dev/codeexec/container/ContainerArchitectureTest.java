package dev.codeexec.container;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.name;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import dev.codeexec.jupyter.BoundaryKernels;
import dev.codeexec.jupyter.KernelLauncher;
import dev.codeexec.jupyter.KernelOptions;
import dev.codeexec.spi.host.QuotaVolumes;

/**
 * The container backend builds on the engine contract, the SPI and the workspace rules alone, uses of the host
 * family only the size-bounded volumes and of the Jupyter module only the kernels inside a boundary, starts no host
 * process, and shows only its engine. See "Layers" in {@code docs/backend-authors.md}.
 */
@AnalyzeClasses(packages = "dev.codeexec.container", importOptions = ImportOption.DoNotIncludeTests.class)
class ContainerArchitectureTest {

    @ArchTest
    static final ArchRule container_does_not_depend_on_the_adapter = noClasses()
            .that().resideInAPackage("dev.codeexec.container..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.codeexec.langchain4j..", "dev.langchain4j..")
            .because("backends implement the engine contract, usable without LangChain4j; the adapter builds on "
                    + "them, not the other way round");

    @ArchTest
    static final ArchRule container_uses_no_internal_code_and_no_other_backend = noClasses()
            .that().resideInAPackage("dev.codeexec.container..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.codeexec.internal..", "dev.codeexec.local..",
                    "dev.codeexec.sandbox..", "dev.codeexec.e2b..")
            .because("a backend builds on the core's API and SPI; internal code serves the core alone");

    @ArchTest
    static final ArchRule of_the_jupyter_module_only_the_boundary_kernels = noClasses()
            .that().resideInAPackage("dev.codeexec.container..")
            .should().dependOnClassesThat(resideInAPackage("dev.codeexec.jupyter..")
                    .and(not(name(BoundaryKernels.class.getName())))
                    .and(not(name(KernelOptions.class.getName())))
                    .and(not(name(KernelLauncher.class.getName()))))
            .because("the container's Python kernel is the Jupyter module's BoundaryKernels, started through this "
                    + "engine's own run planning; the host Jupyter engine's parts are not a container's");

    @ArchTest
    static final ArchRule of_the_host_family_only_the_volumes = noClasses()
            .that().resideInAPackage("dev.codeexec.container..")
            .should().dependOnClassesThat(resideInAPackage("dev.codeexec.spi.host..")
                    .and(not(name(QuotaVolumes.class.getName()))))
            .because("programs run in the container, not as host processes; only the workspace volumes live on the "
                    + "host");

    @ArchTest
    static final ArchRule no_host_process = noClasses()
            .that().resideInAPackage("dev.codeexec.container..")
            .should().dependOnClassesThat().belongToAnyOf(ProcessBuilder.class)
            .orShould().callMethod(System.class, "getenv")
            .because("the container backend runs code through the Docker engine and takes environments from the "
                    + "engine's policy");

    @ArchTest
    static final ArchRule only_the_engine_is_public = noClasses()
            .that().resideInAPackage("dev.codeexec.container..")
            .and().doNotHaveFullyQualifiedName(ContainerEngine.class.getName())
            .and().doNotHaveFullyQualifiedName(ContainerEngine.Builder.class.getName())
            .should().bePublic()
            .because("the Docker connection, exec channel, archives and workspace containers are implementation "
                    + "details");
}
