package dev.codeexec.spring;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.container.ContainerEngine;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** {@code codeexec.backend=container}; loaded only when the container module is present. */
final class ContainerBackend {

    private ContainerBackend() {
    }

    static ContainerEngine create(CodeExecProperties.Container p, ArtifactService artifacts,
                                  NetworkSettings network, PythonKernelProperties kernel) {
        if (p.getImage() == null || p.getImage().isBlank()) {
            throw new InvalidConfigurationPropertyValueException("codeexec.container.image", p.getImage(),
                    "the container backend needs an image that is present on the engine (it is never pulled)");
        }
        ContainerEngine.Builder b = ContainerEngine.builder().image(p.getImage()).network(p.isNetwork())
                .artifactService(artifacts);
        if (network.hasPolicy()) {
            if (p.isNetwork()) {
                throw new InvalidConfigurationPropertyValueException("codeexec.container.network", true, "an egress "
                        + "policy (codeexec.network.*) replaces the container network: containers get none and reach "
                        + "the hosts the policy allows through the engine's egress proxy. Leave "
                        + "codeexec.container.network unset or false");
            }
            b.egress(network.policy()).egressProxy(network.proxy());
        }
        if (p.getDockerHost() != null) {
            b.dockerHost(p.getDockerHost());
        }
        if (p.getTlsCertPath() != null) {
            b.tls(p.getTlsCertPath().toString());
        }
        if (p.getMemoryBytes() != null) {
            positive("codeexec.container.memory-bytes", p.getMemoryBytes());
            b.memoryBytes(p.getMemoryBytes());
        }
        if (p.getProcesses() != null) {
            positive("codeexec.container.processes", p.getProcesses());
            b.processes(p.getProcesses());
        }
        if (p.getCpus() != null) {
            if (!(p.getCpus() > 0)) {
                throw new InvalidConfigurationPropertyValueException("codeexec.container.cpus", p.getCpus(),
                        "must be positive");
            }
            b.cpus(p.getCpus());
        }
        if (p.getRuntime() != null) {
            b.runtime(p.getRuntime());
        }
        if (kernel.isEnabled()) {
            b.pythonKernel(PythonKernels.options(kernel));
        }
        return b.build();
    }

    private static void positive(String name, long value) {
        if (value < 1) {
            throw new InvalidConfigurationPropertyValueException(name, value, "must be positive");
        }
    }
}
