package dev.codeexec;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

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

/**
 * The package boundaries of the core module, checked on its main classes: the runtime does not need LangChain4j,
 * backends do not need the LangChain4j adapter, the public API does not expose implementation packages, no backend
 * library is used, and the packages form no cycle.
 */
@AnalyzeClasses(packages = "dev.codeexec", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {

    static final String ROOT = "dev.codeexec";
    static final String INTERNAL = "internal";

    /** The runtime: everything but the adapter. {@code spi} and {@code internal} may not exist yet. */
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
     * {@code slices().matching("dev.codeexec.(*)..")} would leave out. {@code internal} is a namespace, not a
     * component: each of its packages ({@code internal.host}, {@code internal.process}) is a slice of its own.
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
        int depth = rest.startsWith(INTERNAL + ".") ? 2 : 1;
        String[] parts = rest.split("\\.");
        return SliceIdentifier.of(ROOT + "." + String.join(".", java.util.Arrays.copyOf(parts,
                Math.min(depth, parts.length))));
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
        assertThat(sliceOf("dev.codeexec.spi.host.x")).isEqualTo(SliceIdentifier.of("dev.codeexec.spi.host"));
        assertThat(sliceOf("dev.codeexec.engine.x")).isEqualTo(SliceIdentifier.of("dev.codeexec.engine"));
    }
}
