package dev.codeexec.spring;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.jupyter.JupyterEngine;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** {@code codeexec.backend=jupyter}; loaded only when the Jupyter module is present. */
final class JupyterBackend {

    private JupyterBackend() {
    }

    static JupyterEngine create(CodeExecProperties.Jupyter p, ArtifactService artifacts,
                                PythonKernelProperties kernel) {
        JupyterEngine.Builder b = JupyterEngine.builder().artifactService(artifacts);
        if (p.getBaseDir() != null) {
            b.baseDir(p.getBaseDir());
        }
        if (p.getPython() != null) {
            b.python(p.getPython());
        }
        if (p.getKernelStartTimeout() != null) {
            if (p.getKernelStartTimeout().isNegative() || p.getKernelStartTimeout().isZero()) {
                throw new InvalidConfigurationPropertyValueException("codeexec.jupyter.kernel-start-timeout",
                        p.getKernelStartTimeout(), "must be positive");
            }
            b.kernelStartTimeout(p.getKernelStartTimeout());
        }
        if (kernel.getIdleTimeout() != null) {
            b.idleTimeout(PythonKernels.positive("codeexec.python-kernel.idle-timeout", kernel.getIdleTimeout()));
        }
        return b.build();
    }
}
