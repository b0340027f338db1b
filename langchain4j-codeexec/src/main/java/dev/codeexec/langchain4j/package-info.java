/**
 * The LangChain4j adapter: gives an {@code AiServices} assistant controlled code execution in a workspace of its
 * conversation.
 *
 * <p><b>Warning:</b> the tools run model-written commands with the powers of the configured engine. The local engine
 * is not a sandbox; use the sandbox or container engine, and a command policy, for untrusted input.
 *
 * <p>Start with {@link dev.codeexec.langchain4j.CodeExecution}:
 * <pre>{@code
 * CodeExecution codeExec = CodeExecution.builder().engine(engine).artifactService(artifacts).build();
 * Assistant assistant = AiServices.builder(Assistant.class)
 *         .chatModel(codeExec.wrap(model))            // the response processor (a lone ```python block runs)
 *         .toolProvider(codeExec.toolProvider())      // workspace_exec, file, code and artifact tools
 *         .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(50))
 *         .build();
 * }</pre>
 * The types users meet: {@link dev.codeexec.langchain4j.CodeExecution} (entry point and builder),
 * {@link dev.codeexec.langchain4j.WorkspaceTools} (the {@code @Tool} face), {@link dev.codeexec.langchain4j.WorkspaceIO}
 * (application access to a conversation's workspace), {@link dev.codeexec.langchain4j.CodeBlockMode} and
 * {@link dev.codeexec.langchain4j.WorkspaceTool}. Everything else is package-private. See {@code docs/tools.md} and
 * {@code docs/response-processor.md}.
 */
package dev.codeexec.langchain4j;
