/**
 * The data-analyst chatbot ({@link dev.codeexec.samples.analyst.DataAnalystChatbot}, run with
 * {@code ./scripts/sample}): an AiServices assistant with the workspace tools and the response processor, on any
 * backend, offline on a scripted OpenAI-compatible conversation unless {@code OPENAI_API_KEY} is set.
 */
package dev.codeexec.samples.analyst;
