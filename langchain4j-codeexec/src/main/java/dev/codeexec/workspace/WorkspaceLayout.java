package dev.codeexec.workspace;

import dev.codeexec.engine.CodeExecException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The directory layout of every workspace and the variables that point into it. These names are contract: tools,
 * prompts and programs rely on them.
 *
 * <pre>
 * work/inputs/  inputs staged before execution (uploads, artifact:// references, granted host files)
 * work/         scripts, intermediate data
 * out/          final outputs, collected or saved as artifacts
 * runs/         one directory per run (RUN_DIR) for logs and helper files
 * skills/       staged skill folders
 * home/, tmp/   HOME and TMPDIR for runs with a clean environment
 * </pre>
 */
public final class WorkspaceLayout {

    public static final String WORK = "work";
    public static final String INPUTS = "work/inputs";
    public static final String OUT = "out";
    public static final String RUNS = "runs";
    public static final String SKILLS = "skills";
    public static final String HOME = "home";
    public static final String TMP = "tmp";

    /** Every directory of the layout, parents first. */
    public static final List<String> DIRECTORIES = List.of(WORK, INPUTS, OUT, RUNS, SKILLS, HOME, TMP);

    public static final String ENV_WORKSPACE_DIR = "WORKSPACE_DIR";
    public static final String ENV_WORK_DIR = "WORK_DIR";
    public static final String ENV_OUTPUT_DIR = "OUTPUT_DIR";
    public static final String ENV_RUN_DIR = "RUN_DIR";
    public static final String ENV_SKILLS_DIR = "SKILLS_DIR";

    /** Variable name to workspace-relative directory, for expanding {@code $OUTPUT_DIR/x}-style paths. */
    private static final Map<String, String> VARIABLE_DIRS = Map.of(
            ENV_WORKSPACE_DIR, ".", ENV_WORK_DIR, WORK, ENV_OUTPUT_DIR, OUT, ENV_SKILLS_DIR, SKILLS);

    private static final DateTimeFormatter RUN_STAMP = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss.SSS");
    private static final AtomicLong RUN_COUNTER = new AtomicLong();

    private WorkspaceLayout() {
    }

    /**
     * The workspace variables for a run.
     *
     * @param root   the workspace root as the program sees it
     * @param runDir the run's directory, workspace-relative (see {@link #newRunDir()})
     */
    public static Map<String, String> variables(String root, String runDir) {
        String r = root.endsWith("/") ? root.substring(0, root.length() - 1) : root;
        Map<String, String> vars = new LinkedHashMap<>();
        vars.put(ENV_WORKSPACE_DIR, r);
        vars.put(ENV_WORK_DIR, r + "/" + WORK);
        vars.put(ENV_OUTPUT_DIR, r + "/" + OUT);
        vars.put(ENV_RUN_DIR, r + "/" + runDir);
        vars.put(ENV_SKILLS_DIR, r + "/" + SKILLS);
        return vars;
    }

    /** A fresh, unique, workspace-relative run directory name: {@code runs/run_<timestamp>_<n>}. */
    public static String newRunDir() {
        return RUNS + "/run_" + LocalDateTime.now().format(RUN_STAMP) + "_" + RUN_COUNTER.incrementAndGet();
    }

    /**
     * Rewrites a leading {@code $WORK_DIR}, {@code ${OUTPUT_DIR}} and similar into the workspace-relative directory,
     * so that {@code $OUTPUT_DIR/report.md} means {@code out/report.md}. Only a whole first component is rewritten.
     */
    public static String expandVariables(String path) {
        if (path == null || !path.startsWith("$")) {
            return path;
        }
        int slash = path.indexOf('/');
        String head = slash < 0 ? path : path.substring(0, slash);
        String name = head.startsWith("${") && head.endsWith("}") ? head.substring(2, head.length() - 1)
                : head.substring(1);
        String dir = VARIABLE_DIRS.get(name);
        if (dir == null) {
            return path;
        }
        return slash < 0 ? dir : dir + path.substring(slash);
    }

    /** Creates the layout under a host directory (which must exist). */
    public static void create(Path hostRoot) {
        try {
            for (String d : DIRECTORIES) {
                Files.createDirectories(hostRoot.resolve(d));
            }
        } catch (IOException e) {
            throw new CodeExecException("could not create the workspace layout: " + e.getClass().getSimpleName(), e);
        }
    }
}
