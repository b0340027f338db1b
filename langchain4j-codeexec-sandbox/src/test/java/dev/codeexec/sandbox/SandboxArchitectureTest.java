package dev.codeexec.sandbox;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** The sandbox backend builds on the engine contract alone, checked on its main classes (the CLI included). */
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
}
