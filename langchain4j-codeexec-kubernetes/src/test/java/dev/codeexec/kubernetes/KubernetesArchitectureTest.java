package dev.codeexec.kubernetes;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import java.util.Set;

/**
 * The Kubernetes backend builds on the engine contract, the SPI and the workspace rules alone, uses nothing of the
 * host family, starts no host process, and shows only its engine, its pod template, its one exception and its
 * hardening report. See "Layers" in {@code docs/backend-authors.md}.
 */
@AnalyzeClasses(packages = "dev.codeexec.kubernetes", importOptions = ImportOption.DoNotIncludeTests.class)
class KubernetesArchitectureTest {

    private static final Set<String> PUBLIC = Set.of(KubernetesEngine.class.getName(),
            KubernetesEngine.Builder.class.getName(), PodTemplate.class.getName(), PodTemplate.Builder.class.getName(),
            PodTemplate.EgressProxy.class.getName(), SandboxClaimRefusedException.class.getName(),
            // What a workspace's pod lacks of the hardening (KubernetesEngine.hardeningOf).
            PodHardening.class.getName(), WorkspaceHardening.class.getName(),
            // A record inside a package-private interface: public by the language's rule, reachable only here.
            PodCommands.Result.class.getName());

    @ArchTest
    static final ArchRule kubernetes_does_not_depend_on_the_adapter = noClasses()
            .that().resideInAPackage("dev.codeexec.kubernetes..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.codeexec.langchain4j..", "dev.langchain4j..")
            .because("backends implement the engine contract, usable without LangChain4j; the adapter builds on "
                    + "them, not the other way round");

    @ArchTest
    static final ArchRule kubernetes_uses_no_internal_code_and_no_other_backend = noClasses()
            .that().resideInAPackage("dev.codeexec.kubernetes..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.codeexec.internal..", "dev.codeexec.local..",
                    "dev.codeexec.sandbox..", "dev.codeexec.jupyter..", "dev.codeexec.e2b..",
                    "dev.codeexec.container..")
            .because("a backend builds on the core's API and SPI; internal code serves the core alone");

    @ArchTest
    static final ArchRule nothing_of_the_host_family = noClasses()
            .that().resideInAPackage("dev.codeexec.kubernetes..")
            .should().dependOnClassesThat().resideInAPackage("dev.codeexec.spi.host..")
            .because("programs run in pods, never as processes of this host");

    @ArchTest
    static final ArchRule no_host_process = noClasses()
            .that().resideInAPackage("dev.codeexec.kubernetes..")
            .should().dependOnClassesThat().belongToAnyOf(ProcessBuilder.class)
            .orShould().callMethod(System.class, "getenv")
            .because("the Kubernetes backend runs code through the API server and takes environments from the "
                    + "engine's policy");

    @ArchTest
    static final ArchRule only_the_engine_and_its_settings_are_public = noClasses()
            .that().resideInAPackage("dev.codeexec.kubernetes..")
            .and().doNotHaveFullyQualifiedName(KubernetesEngine.class.getName())
            .and(com.tngtech.archunit.base.DescribedPredicate.describe("not part of the public API",
                    c -> !PUBLIC.contains(c.getName())))
            .should().bePublic()
            .because("the exec socket, pod files, pod lifecycle and claims are implementation details");
}
