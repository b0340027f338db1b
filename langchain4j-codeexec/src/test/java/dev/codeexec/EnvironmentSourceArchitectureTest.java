package dev.codeexec;

import static com.tngtech.archunit.core.domain.JavaCall.Predicates.target;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.assignableTo;
import static com.tngtech.archunit.core.domain.properties.HasName.Predicates.name;
import static com.tngtech.archunit.core.domain.properties.HasOwner.Predicates.With.owner;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import dev.codeexec.spi.host.HostProcessChannel;
import dev.codeexec.spi.EngineBuilder;

/**
 * The environment of code has one source ({@link dev.codeexec.spi.RunEnvironment}): no class reads the JVM's whole
 * environment but the builder that hands it to the engine's policy, and processes start only through the host
 * channel, which gives a process exactly the environment of its launch (and the tree killer's {@code kill}, which
 * gets none).
 */
@AnalyzeClasses(packages = "dev.codeexec", importOptions = ImportOption.DoNotIncludeTests.class)
class EnvironmentSourceArchitectureTest {

    @ArchTest
    static final ArchRule only_the_engine_builder_reads_the_jvm_environment = noClasses()
            .that().doNotHaveFullyQualifiedName(EngineBuilder.class.getName())
            .should().callMethod(System.class, "getenv")
            .because("the environment of code comes from the engine's policy over the host environment the builder "
                    + "was given (RunEnvironment), never from the JVM's directly");

    @ArchTest
    static final ArchRule only_the_host_channel_and_the_tree_killer_start_processes = noClasses()
            .that().doNotHaveFullyQualifiedName(HostProcessChannel.class.getName())
            .and().doNotHaveFullyQualifiedName("dev.codeexec.spi.host.ProcessTreeKiller")
            .and().doNotHaveFullyQualifiedName("dev.codeexec.spi.host.QuotaVolumes")
            .should().dependOnClassesThat().belongToAnyOf(ProcessBuilder.class)
            .because("a ProcessBuilder inherits the JVM's environment unless cleared; HostProcessChannel gives each "
                    + "process exactly its launch's environment (QuotaVolumes runs the host's file system tools, "
                    + "never code, with an environment of its own)");

    @ArchTest
    static final ArchRule nothing_uses_runtime_exec = noClasses()
            .should().callMethodWhere(target(name("exec")).and(target(owner(assignableTo(Runtime.class)))))
            .because("Runtime.exec inherits the JVM's environment");
}
