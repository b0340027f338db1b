package dev.codeexec.langchain4j;

import dev.codeexec.CodeLanguage;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

/**
 * The response processor's settings, resolved from {@link CodeExecution.Builder}: what it does with a lone code block,
 * how many blocks it runs per user message, and which fence tags it runs.
 *
 * @param languages the fence tags to run, in lower case
 */
record CodeBlockSettings(CodeBlockMode mode, int maxRunsPerTurn, Set<String> languages) {

    /**
     * @param autoExecute false to switch the processor off, or null when not set
     * @param mode        the mode, or null for {@link CodeBlockMode#RESULT_TO_MODEL}
     * @param maxRuns     blocks run per user message, or null for the default
     * @param languages   the fence tags to run, or null for every tag of every {@link CodeLanguage}
     * @throws IllegalArgumentException when {@code maxRuns} is below 1
     */
    static CodeBlockSettings resolve(Boolean autoExecute, CodeBlockMode mode, Integer maxRuns, Set<String> languages) {
        CodeBlockMode m = Boolean.FALSE.equals(autoExecute) ? CodeBlockMode.OFF
                : mode != null ? mode : CodeBlockMode.RESULT_TO_MODEL;
        int max = maxRuns != null ? maxRuns : CodeExecution.DEFAULT_MAX_CODE_BLOCK_RUNS_PER_TURN;
        if (max < 1) {
            throw new IllegalArgumentException("maxCodeBlockRunsPerTurn (" + max
                    + ") must be at least 1; use autoExecuteCodeBlocks(false) to switch the processor off");
        }
        Set<String> langs = new HashSet<>();
        if (languages != null) {
            languages.forEach(l -> langs.add(l.strip().toLowerCase(Locale.ROOT)));
        } else {
            for (CodeLanguage l : CodeLanguage.values()) {
                langs.addAll(l.tags());
            }
        }
        return new CodeBlockSettings(m, max, Set.copyOf(langs));
    }

    /** The rule of the response processor, calling the code-execution tool by {@code toolName}. */
    CodeBlockPromotion promotion(String toolName) {
        return new CodeBlockPromotion(mode, toolName, maxRunsPerTurn, languages);
    }
}
