package dev.codeexec.samples.dropin;

import dev.codeexec.artifact.FileSystemArtifactService;
import dev.codeexec.container.ContainerEngine;
import dev.codeexec.engine.Engine;
import dev.codeexec.jupyter.JupyterEngine;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.sandbox.SandboxEngine;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import java.nio.file.Path;
import java.util.List;

/**
 * The code of docs/getting-started.md, compiled: {@code GettingStartedDocTest} checks that every Java block of that
 * page is in this file or in {@link HelpDesk}, and runs the assistant with an artifact store.
 */
public final class GettingStarted {

    private GettingStarted() {
    }

    /** Step 4 of the page, one line per backend. Compiled, not run here: each line needs its backend on the host. */
    static List<Engine> everyEngine() {
        Engine local = LocalEngine.create();                                // no isolation: programs run as you
        Engine sandbox = SandboxEngine.create();                            // bubblewrap; or says what to fix
        Engine container = ContainerEngine.builder().image("codeexec-python:bookworm").build(); // never pulled
        Engine jupyter = JupyterEngine.builder().build();                   // a kernel per workspace; no isolation
        return List.of(local, sandbox, container, jupyter);
    }

    /** Step 6: an artifact store, so that the model can keep results; the engine, the service and the assistant. */
    record WithArtifacts(Engine engine, CodeExecution codeExec, HelpDesk.Assistant assistant) implements AutoCloseable {
        @Override
        public void close() {
            codeExec.close();
            engine.close();
        }
    }

    static WithArtifacts withArtifacts(ChatModel model, Path artifactsDir) {
        FileSystemArtifactService artifacts = FileSystemArtifactService.at(artifactsDir);
        SandboxEngine engine = SandboxEngine.builder().artifactService(artifacts).build(); // hidden from programs
        CodeExecution codeExec = CodeExecution.builder().engine(engine).build();
        HelpDesk.Assistant assistant = AiServices.builder(HelpDesk.Assistant.class)
                .chatModel(codeExec.wrap(model))
                .toolProvider(codeExec.toolProvider())                      // now with workspace_save_artifact
                .systemMessageProvider(id -> codeExec.workspaceGuidance())  // optional: the workspace conventions
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(20))
                .build();
        return new WithArtifacts(engine, codeExec, assistant);
    }

    /** Step 5: the help desk against OpenAI, or any OpenAI-compatible server (set its {@code baseUrl}). */
    public static void main(String[] args) {
        ChatModel model = OpenAiChatModel.builder()
                .apiKey(System.getenv("OPENAI_API_KEY"))
                .modelName("gpt-4o-mini")
                .build();
        try (HelpDesk desk = new HelpDesk(model)) {
            System.out.println(desk.answer("user-1", "What is the 30th Fibonacci number? Compute it."));
        }
    }
}
