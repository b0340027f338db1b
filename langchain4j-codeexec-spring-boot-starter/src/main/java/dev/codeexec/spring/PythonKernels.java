package dev.codeexec.spring;

import dev.codeexec.jupyter.KernelOptions;
import java.time.Duration;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * {@code codeexec.python-kernel.*} as the engines' {@link KernelOptions}; loaded only by the backends that run
 * kernels (the Jupyter module is then on the class path).
 */
final class PythonKernels {

    private PythonKernels() {
    }

    /** The options of {@code p}, checked: a timeout must be positive. */
    static KernelOptions options(PythonKernelProperties p) {
        KernelOptions.Builder b = KernelOptions.builder();
        if (p.getPython() != null && !p.getPython().isBlank()) {
            b.python(p.getPython());
        }
        if (p.getIdleTimeout() != null) {
            b.idleTimeout(positive("codeexec.python-kernel.idle-timeout", p.getIdleTimeout()));
        }
        if (p.getStartTimeout() != null) {
            b.startTimeout(positive("codeexec.python-kernel.start-timeout", p.getStartTimeout()));
        }
        return b.build();
    }

    static Duration positive(String name, Duration d) {
        if (d.isNegative() || d.isZero()) {
            throw new InvalidConfigurationPropertyValueException(name, d, "must be positive");
        }
        return d;
    }
}
