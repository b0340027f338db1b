package dev.codeexec;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.dependencies.Slice;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import com.tngtech.archunit.library.dependencies.Slices;
import dev.codeexec.engine.Engine;
import dev.codeexec.spi.host.Cgroups;
import dev.codeexec.spi.host.HostProcessChannel;
import dev.codeexec.spi.host.HostRunPlace;
import dev.codeexec.spi.host.HostRuns;
import dev.codeexec.spi.host.LauncherThreads;
import dev.codeexec.spi.host.ParentDeath;
import dev.codeexec.spi.host.PidNamespace;
import dev.codeexec.spi.host.QuotaVolumes;
import java.util.Set;

/**
 * The package boundaries of the core module, checked on its main classes: the packages form declared layers (the
 * API at the bottom, then the workspace rules, the SPI, internal code, the local backend and the LangChain4j adapter
 * on top; see "Layers" in {@code docs/backend-authors.md}), the runtime does not need LangChain4j, backends do not
 * need the LangChain4j adapter, the public API does not expose implementation packages, no backend library is used,
 * the host-family SPI shows only its documented classes, and the packages form no cycle.
 */
@AnalyzeClasses(packages = "dev.codeexec", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {

    static final String ROOT = "dev.codeexec";

    /** The runtime: everything but the adapter. {@code internal} holds nothing today; the rules stand for it. */
    static final String[] RUNTIME_PACKAGES = {
        ROOT,
        "dev.codeexec.engine..",
        "dev.codeexec.workspace..",
        "dev.codeexec.artifact..",
        "dev.codeexec.policy..",
        "dev.codeexec.governance..",
        "dev.codeexec.network..",
        "dev.codeexec.local..",
        "dev.codeexec.spi..",
        "dev.codeexec.internal..",
    };

    /** Backend packages; in this module only {@code local} exists, the others live in their own modules. */
    static final String[] BACKEND_PACKAGES = {
        "dev.codeexec.local..",
        "dev.codeexec.sandbox..",
        "dev.codeexec.container..",
        "dev.codeexec.jupyter..",
        "dev.codeexec.e2b..",
    };

    /** What applications program against. */
    static final String[] PUBLIC_API_PACKAGES = {
        ROOT, "dev.codeexec.engine..", "dev.codeexec.artifact..", "dev.codeexec.policy..",
        "dev.codeexec.governance..", "dev.codeexec.network..",
    };

    /**
     * The layers, bottom to top; each may use only the layers listed for it. Every main class of the module belongs
     * to one, so a new top-level package must be placed here first.
     */
    @ArchTest
    static final ArchRule packages_form_declared_layers = layeredArchitecture()
            .consideringOnlyDependenciesInLayers()
            .withOptionalLayers(true)
            .ensureAllClassesAreContainedInArchitecture()
            .layer("contract").definedBy(ROOT, "dev.codeexec.engine..")
            .layer("artifacts").definedBy("dev.codeexec.artifact..")
            .layer("network").definedBy("dev.codeexec.network..")
            .layer("workspace rules").definedBy("dev.codeexec.workspace..")
            .layer("policy").definedBy("dev.codeexec.policy..")
            .layer("governance").definedBy("dev.codeexec.governance..")
            .layer("spi").definedBy("dev.codeexec.spi..")
            .layer("internal").definedBy("dev.codeexec.internal..")
            .layer("backends").definedBy(BACKEND_PACKAGES)
            .layer("adapter").definedBy("dev.codeexec.langchain4j..")
            .whereLayer("contract").mayNotAccessAnyLayer()
            .whereLayer("artifacts").mayOnlyAccessLayers("contract")
            .whereLayer("network").mayOnlyAccessLayers("contract")
            .whereLayer("workspace rules").mayOnlyAccessLayers("contract", "artifacts")
            .whereLayer("policy").mayOnlyAccessLayers("contract", "workspace rules")
            .whereLayer("governance").mayOnlyAccessLayers("contract", "network", "policy")
            .whereLayer("spi").mayOnlyAccessLayers("contract", "artifacts", "network", "workspace rules", "policy")
            .whereLayer("internal").mayOnlyAccessLayers("contract", "artifacts", "network", "workspace rules",
                    "policy", "spi")
            .whereLayer("backends").mayOnlyAccessLayers("contract", "artifacts", "network", "workspace rules",
                    "policy", "spi", "internal")
            .whereLayer("adapter").mayOnlyAccessLayers("contract", "artifacts", "network", "workspace rules",
                    "policy", "governance")
            .because("the API is usable without the SPI, the SPI without internal code, and neither needs a backend "
                    + "or the LangChain4j adapter; internal code serves this module alone");

    @ArchTest
    static final ArchRule the_generic_spi_does_not_need_the_host_family = noClasses()
            .that().resideInAPackage("dev.codeexec.spi")
            .should().dependOnClassesThat().resideInAPackage("dev.codeexec.spi.host..")
            .because("remote backends build on dev.codeexec.spi and must not pull in host process plumbing");

    /** The documented classes of the host-family SPI ({@code dev.codeexec.spi.host}); the rest is package-private. */
    static final Set<Class<?>> HOST_FAMILY_SPI = Set.of(HostProcessChannel.class, HostRuns.class, HostRunPlace.class,
            ParentDeath.class, PidNamespace.class, LauncherThreads.class, Cgroups.class, QuotaVolumes.class);

    @ArchTest
    static final ArchRule the_host_family_spi_shows_only_its_documented_classes = noClasses()
            .that().resideInAPackage("dev.codeexec.spi.host..")
            .and().areTopLevelClasses()
            .and(DescribedPredicate.describe("are not documented host-family SPI", (JavaClass c) ->
                    HOST_FAMILY_SPI.stream().noneMatch(a -> a.getName().equals(c.getName()))))
            .should().bePublic()
            .because("a class of the host family is SPI only when its package-info says who uses it; helpers of "
                    + "one class stay package-private");

    @ArchTest
    static final ArchRule runtime_does_not_depend_on_langchain4j = noClasses()
            .that().resideInAnyPackage(RUNTIME_PACKAGES)
            .should().dependOnClassesThat().resideInAPackage("dev.langchain4j..")
            .because("the runtime is usable on its own; dev.codeexec.langchain4j is the only adapter")
            .allowEmptyShould(true);

    @ArchTest
    static final ArchRule backends_do_not_depend_on_the_adapter = noClasses()
            .that().resideInAnyPackage(BACKEND_PACKAGES)
            .should().dependOnClassesThat().resideInAPackage("dev.codeexec.langchain4j..")
            .because("backends implement the engine contract; the adapter builds on them, not the other way round")
            .allowEmptyShould(true);

    @ArchTest
    static final ArchRule public_api_does_not_expose_internals = noClasses()
            .that().resideInAnyPackage(PUBLIC_API_PACKAGES)
            .should().dependOnClassesThat().resideInAPackage("dev.codeexec.internal..")
            .because("implementation packages must not leak into the API");

    @ArchTest
    static final ArchRule no_backend_library_in_core = noClasses()
            .should().dependOnClassesThat().resideInAnyPackage("com.github.dockerjava..", "org.zeromq..", "zmq..")
            .because("docker-java and jeromq belong in the container and jupyter modules");

    @ArchTest
    static final ArchRule only_the_metrics_package_uses_micrometer = noClasses()
            .that().resideOutsideOfPackage("dev.codeexec.governance.micrometer..")
            .should().dependOnClassesThat().resideInAnyPackage("io.micrometer..", "dev.codeexec.governance.micrometer..")
            .because("Micrometer is optional: nothing but the metrics listener may need it, and nothing may load that "
                    + "listener implicitly");

    /**
     * One slice per top-level package under {@code dev.codeexec}, and one for the root package itself, which
     * {@code slices().matching("dev.codeexec.(*)..")} would leave out. {@code internal} is one slice like any other:
     * a dependency from {@code spi} into {@code internal} and back is a cycle, not two unrelated edges.
     */
    static final SliceAssignment TOP_LEVEL_PACKAGES = new SliceAssignment() {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
            return sliceOf(javaClass.getPackageName());
        }

        @Override
        public String getDescription() {
            return "dev.codeexec and each of its top-level subpackages";
        }
    };

    static SliceIdentifier sliceOf(String packageName) {
        if (packageName.equals(ROOT)) {
            return SliceIdentifier.of(ROOT);
        }
        if (!packageName.startsWith(ROOT + ".")) {
            return SliceIdentifier.ignore();
        }
        String rest = packageName.substring(ROOT.length() + 1);
        int dot = rest.indexOf('.');
        return SliceIdentifier.of(ROOT + "." + (dot < 0 ? rest : rest.substring(0, dot)));
    }

    @ArchTest
    static final ArchRule no_package_cycles = slices()
            .assignedFrom(TOP_LEVEL_PACKAGES)
            .should().beFreeOfCycles();

    /** The cycle rule covers the root package: its classes form a slice of their own, apart from the subpackages. */
    @ArchTest
    static void root_package_is_a_slice(JavaClasses classes) {
        Slices sliced = Slices.assignedFrom(TOP_LEVEL_PACKAGES).transform(classes);
        Slice root = sliced.stream()
                .filter(slice -> slice.contains(classes.get(CodeExecutor.class)))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no slice holds " + CodeExecutor.class.getName()));
        assertThat(root).allMatch(c -> c.getPackageName().equals(ROOT));
        assertThat(root).doesNotContain(classes.get(Engine.class));
        assertThat(sliced.stream().filter(slice -> slice.contains(classes.get(Engine.class))).findFirst())
                .hasValueSatisfying(engine -> assertThat(engine).allMatch(c -> c.getPackageName().startsWith(ROOT + ".engine")));
        assertThat(sliceOf("dev.codeexecutor")).isEqualTo(SliceIdentifier.ignore());
        assertThat(sliceOf("dev.codeexec.internal.host.x")).isEqualTo(SliceIdentifier.of("dev.codeexec.internal"));
        assertThat(sliceOf("dev.codeexec.spi.host.x")).isEqualTo(SliceIdentifier.of("dev.codeexec.spi"));
        assertThat(sliceOf("dev.codeexec.engine.x")).isEqualTo(SliceIdentifier.of("dev.codeexec.engine"));
    }
}
