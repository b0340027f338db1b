package dev.codeexec.samples;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.sandbox.SandboxEngine;
import java.time.Duration;
import java.util.List;

/**
 * The quick-start sample: one workspace, an input file, a Python block that analyses it, the collected output,
 * and refusals (a timeout that kills a process tree, a path that leaves the workspace, a host secret the sandbox
 * hides). It runs in the bubblewrap sandbox where the host has it, else on the local engine, and says which.
 * Offline; no API key.
 */
public final class QuickStart {

    private static final String SALES = """
            region,product,units,price
            north,widget,12,2.50
            south,widget,7,2.50
            north,gadget,3,10.00
            east,gadget,9,10.00
            south,gizmo,20,1.25
            """;

    private static final String ANALYSIS = """
            import csv, os
            totals = {}
            with open('inputs/sales.csv') as f:
                for row in csv.DictReader(f):
                    totals[row['region']] = totals.get(row['region'], 0) + int(row['units']) * float(row['price'])
            lines = [f"| {r} | {t:.2f} |" for r, t in sorted(totals.items(), key=lambda x: -x[1])]
            report = "| region | revenue |\\n|---|---|\\n" + "\\n".join(lines) + "\\n"
            open(os.path.join(os.environ['OUTPUT_DIR'], 'revenue.md'), 'w').write(report)
            print(report)
            """;

    private static final String ANALYSIS_SH = """
            awk -F, 'NR > 1 { t[$1] += $3 * $4 } END { for (r in t) printf "| %s | %.2f |\\n", r, t[r] }' \\
                inputs/sales.csv | sort -t'|' -k3 -rn > ../out/rows.txt
            { printf '| region | revenue |\\n|---|---|\\n'; cat ../out/rows.txt; } > "$OUTPUT_DIR/revenue.md"
            rm ../out/rows.txt
            cat "$OUTPUT_DIR/revenue.md"
            """;

    private QuickStart() {
    }

    public static void main(String[] args) {
        try (Engine engine = chooseEngine()) {
            Workspace ws = engine.manager().createWorkspace("quick-start", WorkspacePolicy.DEFAULT);
            engine.fs().putFiles(ws, List.of(PutFile.of("work/inputs/sales.csv", SALES)));

            System.out.println("== A Python block analyses work/inputs/sales.csv ==");
            CodeExecutionResult result;
            try {
                result = engine.executeCode(ws, CodeExecutionInput.of(CodeBlock.of("python", ANALYSIS)));
            } catch (InvalidSpecException noPython) {
                // A machine without python3 (a minimal Debian, say): the same analysis as a shell block.
                System.out.println("(" + noPython.getMessage() + "; running the shell version instead)");
                result = engine.executeCode(ws, CodeExecutionInput.of(CodeBlock.of("bash", ANALYSIS_SH)));
            }
            System.out.println(result.toText());

            System.out.println("\n== A runaway program tree is killed at its timeout ==");
            RunResult runaway = engine.runner().runProgram(ws, RunProgramSpec.shell(
                    "sleep 600 & setsid sleep 600 & echo started; sleep 600").timeout(Duration.ofSeconds(1)).build());
            System.out.printf("timed out: %s, after %d ms, output: %s%n", runaway.timedOut(),
                    runaway.duration().toMillis(), runaway.stdout().strip());

            System.out.println("\n== A path that leaves the workspace is refused ==");
            try {
                engine.fs().readFile(ws, "../../etc/passwd", 0, 100);
            } catch (PathEscapeException e) {
                System.out.println("refused: " + e.getMessage());
            }
            System.out.println("\n== The program itself cannot read host secrets (in the sandbox) ==");
            RunResult secret = engine.runner().runProgram(ws, RunProgramSpec.builder("cat").args("/etc/shadow")
                    .build());
            String shown = (secret.stdout() + secret.stderr()).strip();
            System.out.printf("exit %d: %s%n", secret.exitCode(), shown.length() > 60 ? shown.substring(0, 60) + "..."
                    : shown);

            System.out.println("\nEngine: " + engine.name() + ", " + engine.describe());
        }
    }

    /** The sandbox where bubblewrap works on this host; otherwise the local engine, which is no isolation. */
    private static Engine chooseEngine() {
        try {
            return SandboxEngine.create();
        } catch (CodeExecException e) {
            System.out.println("(sandbox unavailable here, using LocalEngine, which is NOT a sandbox: "
                    + e.getMessage().lines().findFirst().orElse("") + ")\n");
            return LocalEngine.create();
        }
    }
}
