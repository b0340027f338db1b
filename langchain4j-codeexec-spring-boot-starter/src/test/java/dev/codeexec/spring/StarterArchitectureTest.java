package dev.codeexec.spring;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The starter sits on top of every layer and configures what applications could configure by hand: the API, the
 * backends' engines and the LangChain4j adapter, never the SPI or the workspace rules. See "Layers" in
 * {@code docs/backend-authors.md}.
 */
@AnalyzeClasses(packages = "dev.codeexec.spring", importOptions = ImportOption.DoNotIncludeTests.class)
class StarterArchitectureTest {

    @ArchTest
    static final ArchRule the_starter_uses_what_applications_use = noClasses()
            .that().resideInAPackage("dev.codeexec.spring..")
            .should().dependOnClassesThat().resideInAnyPackage("dev.codeexec.internal..", "dev.codeexec.spi..",
                    "dev.codeexec.workspace..")
            .because("auto-configuration builds engines and tools through their public builders, as an application "
                    + "would; backend machinery stays behind them");
}
