package dev.codeexec.spring;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.artifact.FileSystemArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.governance.AuditLogListener;
import dev.codeexec.governance.ExecutionApprover;
import dev.codeexec.governance.ExecutionListener;
import dev.codeexec.governance.micrometer.MicrometerExecutionListener;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.WorkspaceTools;
import dev.codeexec.network.EgressApprover;
import dev.codeexec.network.EgressListener;
import dev.codeexec.policy.CommandPolicy;
import dev.langchain4j.service.tool.ToolProvider;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of code execution for LangChain4j: the engine {@code codeexec.backend} names (closed with the
 * context), a file-system artifact store under {@code codeexec.artifacts.dir}, the command policy of
 * {@code codeexec.policy.*}, the egress policy of {@code codeexec.network.*}, and {@link CodeExecution} with the
 * application's {@link ExecutionApprover} and {@link ExecutionListener} beans; exposes {@link CodeExecution}, its {@link WorkspaceTools} ({@code @Tool} methods)
 * and its {@link ToolProvider} as beans. Each of the engine, the artifact store, the command policy and
 * {@link CodeExecution} itself gives way to a bean of the application's own.
 *
 * <p>With a Micrometer {@code MeterRegistry} bean, a {@link MicrometerExecutionListener} records metrics; with
 * {@code codeexec.audit-log} (default true), an {@link AuditLogListener} writes one line per event.
 *
 * <p>Keys under {@code codeexec} that no property binds stop the start-up, naming the nearest property
 * ({@code codeexec.ignore-unknown-properties=true} logs them instead); a backend whose module is missing is reported
 * with the dependency to add.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnProperty(prefix = "codeexec", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(CodeExecProperties.class)
public class CodeExecAutoConfiguration {

    /**
     * Checks the keys under {@code codeexec} before any of the beans below is built, so that a misspelt key is reported
     * as itself and not as what its absence causes (a missing image, a backend with its default network).
     *
     * @param p       the bound {@code codeexec.*} properties
     * @param context the context whose environment holds the keys
     * @throws IllegalStateException for keys no property binds (naming each and the nearest property), unless
     *                               {@code codeexec.ignore-unknown-properties}
     */
    public CodeExecAutoConfiguration(CodeExecProperties p, ApplicationContext context) {
        UnknownProperties.check(context.getEnvironment(), context.getClassLoader(), p.isIgnoreUnknownProperties());
    }

    /** The file-system store under {@code codeexec.artifacts.dir}. */
    @Bean
    @ConditionalOnMissingBean(ArtifactService.class)
    public FileSystemArtifactService codeExecArtifactService(CodeExecProperties p) {
        return FileSystemArtifactService.at(p.getArtifacts().getDir());
    }

    /**
     * The engine {@code codeexec.backend} names, held to the egress policy of {@code codeexec.network.*} (with the
     * context's {@link EgressApprover} and {@link EgressListener} beans) when one is set; closed with the context.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(Engine.class)
    public Engine codeExecEngine(CodeExecProperties p, ArtifactService artifacts,
                                 ObjectProvider<CommandPolicy> policy, ObjectProvider<EgressApprover> egressApprover,
                                 ObjectProvider<EgressListener> egressListeners, ApplicationContext context) {
        validate(p);
        NetworkSettings network = NetworkSettings.of(p.getNetwork(),
                p.getNetwork().hasPolicy() ? egressApprover(egressApprover) : null,
                p.getNetwork().hasPolicy() ? egressListeners.orderedStream().toList() : List.of());
        return Backends.create(p, artifacts, policy(p, policy), context.getClassLoader(),
                Backends.e2bVariables(context.getEnvironment()), network, context);
    }

    /** The SLF4J audit log of every execution event ({@code dev.codeexec.audit}). */
    @Bean
    @ConditionalOnProperty(prefix = "codeexec", name = "audit-log", havingValue = "true", matchIfMissing = true)
    public AuditLogListener codeExecAuditLog() {
        return AuditLogListener.create();
    }

    /** The tools, the response processor and the application facade, with the context's approver and listeners. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(CodeExecution.class)
    public CodeExecution codeExecution(CodeExecProperties p, Engine engine, ArtifactService artifacts,
                                       ObjectProvider<CommandPolicy> policy, ObjectProvider<ExecutionApprover> approver,
                                       ObjectProvider<ExecutionListener> listeners) {
        validate(p);
        CodeExecution.Builder b = CodeExecution.builder().engine(engine).artifactService(artifacts)
                .commandPolicy(policy(p, policy)).approver(approver(approver))
                .listeners(listeners.orderedStream().toList())
                .autoExecuteCodeBlocks(p.isAutoExecuteCodeBlocks()).requireMemoryId(p.isRequireMemoryId());
        if (p.getDefaultTimeout() != null) {
            b.defaultTimeout(p.getDefaultTimeout());
        }
        if (p.getMaxTimeout() != null) {
            b.maxTimeout(p.getMaxTimeout());
        }
        if (p.getMaxOutputBytes() != null) {
            b.maxOutputBytes(p.getMaxOutputBytes());
        }
        if (p.getMaxWriteBytes() != null) {
            b.maxWriteBytes(p.getMaxWriteBytes());
        }
        if (p.getApprovalTimeout() != null) {
            b.approvalTimeout(p.getApprovalTimeout());
        }
        if (p.getWorkspaceIdleTtl() != null) {
            b.workspaceIdleTtl(p.getWorkspaceIdleTtl().isZero() ? null : p.getWorkspaceIdleTtl());
        }
        return b.build();
    }

    /** The tools as {@code @Tool} methods, for frameworks that look for {@code @Tool} beans. */
    @Bean
    @ConditionalOnMissingBean(WorkspaceTools.class)
    public WorkspaceTools codeExecWorkspaceTools(CodeExecution codeExecution) {
        return codeExecution.tools();
    }

    /** The tools as a {@link ToolProvider}: configured names, validated arguments, results with attributes. */
    @Bean
    @ConditionalOnMissingBean(name = "codeExecToolProvider")
    public ToolProvider codeExecToolProvider(CodeExecution codeExecution) {
        return codeExecution.toolProvider();
    }

    /** Metrics, where the application has Micrometer and a registry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    @ConditionalOnBean(type = "io.micrometer.core.instrument.MeterRegistry")
    static class Metrics {

        @Bean
        @ConditionalOnMissingBean(MicrometerExecutionListener.class)
        MicrometerExecutionListener codeExecMetrics(MeterRegistry registry) {
            return new MicrometerExecutionListener(registry);
        }
    }

    /**
     * The application's approver bean, or none. Two are an error, not "none": silently dropping an approver would run
     * what it was meant to stop.
     */
    private static ExecutionApprover approver(ObjectProvider<ExecutionApprover> bean) {
        try {
            return bean.getIfAvailable();
        } catch (NoUniqueBeanDefinitionException e) {
            throw new IllegalStateException("the context has " + e.getNumberOfBeansFound() + " ExecutionApprover beans "
                    + e.getBeanNamesFound() + ", and code execution takes one: combine them with "
                    + "ExecutionApprovers.allOf(...) in a single bean, or mark one @Primary", e);
        }
    }

    /** The application's egress approver bean, or none (hosts no rule covers are then refused). Two are an error. */
    private static EgressApprover egressApprover(ObjectProvider<EgressApprover> bean) {
        try {
            return bean.getIfAvailable();
        } catch (NoUniqueBeanDefinitionException e) {
            throw new IllegalStateException("the context has " + e.getNumberOfBeansFound() + " EgressApprover beans "
                    + e.getBeanNamesFound() + ", and the egress proxy takes one: combine them in a single bean, or "
                    + "mark one @Primary", e);
        }
    }

    /** The application's policy bean, else the one of {@code codeexec.policy.*}, else none. Two beans are an error. */
    private static CommandPolicy policy(CodeExecProperties p, ObjectProvider<CommandPolicy> bean) {
        CommandPolicy own;
        try {
            own = bean.getIfAvailable();
        } catch (NoUniqueBeanDefinitionException e) {
            throw new IllegalStateException("the context has " + e.getNumberOfBeansFound() + " CommandPolicy beans "
                    + e.getBeanNamesFound() + ", and code execution takes one: keep one, or mark one @Primary", e);
        }
        if (own != null) {
            return own;
        }
        CodeExecProperties.Policy pp = p.getPolicy();
        if (pp.getAllow().isEmpty() && pp.getDeny().isEmpty()) {
            return null;
        }
        return CommandPolicy.builder().allow(pp.getAllow()).deny(pp.getDeny()).build();
    }

    /** The checks that name the property; the builders check the rest. */
    static void validate(CodeExecProperties p) {
        positive("codeexec.default-timeout", p.getDefaultTimeout());
        positive("codeexec.max-timeout", p.getMaxTimeout());
        positive("codeexec.approval-timeout", p.getApprovalTimeout());
        if (p.getWorkspaceIdleTtl() != null && p.getWorkspaceIdleTtl().isNegative()) {
            throw new InvalidConfigurationPropertyValueException("codeexec.workspace-idle-ttl", p.getWorkspaceIdleTtl(),
                    "must not be negative (0 keeps workspaces until they are closed)");
        }
        Duration max = p.getMaxTimeout() != null ? p.getMaxTimeout()
                : Duration.ofSeconds(CodeExecution.DEFAULT_MAX_TIMEOUT_SECONDS);
        if (p.getDefaultTimeout() != null && p.getDefaultTimeout().compareTo(max) > 0) {
            throw new InvalidConfigurationPropertyValueException("codeexec.default-timeout", p.getDefaultTimeout(),
                    "must not exceed codeexec.max-timeout (" + max + ")");
        }
        if (p.getMaxOutputBytes() != null && p.getMaxOutputBytes() < 1) {
            throw new InvalidConfigurationPropertyValueException("codeexec.max-output-bytes", p.getMaxOutputBytes(),
                    "must be positive");
        }
        if (p.getMaxWriteBytes() != null && p.getMaxWriteBytes() < 1) {
            throw new InvalidConfigurationPropertyValueException("codeexec.max-write-bytes", p.getMaxWriteBytes(),
                    "must be positive");
        }
    }

    private static void positive(String name, Duration d) {
        if (d != null && (d.isNegative() || d.isZero())) {
            throw new InvalidConfigurationPropertyValueException(name, d, "must be positive");
        }
    }
}
