package dev.codeexec.samples.analyst;

import dev.codeexec.engine.EgressControl;
import java.io.PrintStream;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The demo's network step: on a backend that holds programs to an egress policy through the engine's proxy, the
 * model installs {@value PackageIndex#PACKAGE} with pip from the sample's package index (the one destination the
 * policy allows), uses it, and then tries {@code example.org}, which the proxy refuses. On any other backend the step
 * is skipped with the reason: it is never run without the policy enforced.
 */
final class NetworkStep {

    /**
     * What the step did.
     *
     * @param skipped why it was skipped, or null when it ran
     * @param steps   its tool calls
     * @param answer  the assistant's answer, or null when it was skipped
     */
    record Outcome(String skipped, List<Transcript.Step> steps, String answer) {
        boolean ran() {
            return skipped == null;
        }
    }

    private NetworkStep() {
    }

    /**
     * @param index the package index whose policy the engine was given, or null (the step is skipped)
     * @param ask   sends a user message to the assistant and prints the exchange; returns the answer
     */
    static Outcome run(Backends.Opened opened, PackageIndex index, UnaryOperator<String> ask, Transcript transcript,
                       PrintStream out) {
        out.println("\n== Network: a package from an allowed index, and a host that is not allowed ==");
        String skipped = skipReason(opened, index);
        if (skipped != null) {
            out.println(skipped);
            return new Outcome(skipped, List.of(), null);
        }
        out.println("Egress policy: " + index.policy() + ". " + PackageIndex.HOST + " is the sample's package index on "
                + "this host (127.0.0.1:" + index.port() + ", serving " + PackageIndex.WHEEL + "); the proxy resolves "
                + "that name, and refuses every other destination.");
        int before = transcript.steps().size();
        String answer = ask.apply(NetworkScript.request(index.indexUrl()));
        List<Transcript.Step> all = transcript.steps();
        return new Outcome(null, List.copyOf(all.subList(before, all.size())), answer);
    }

    /** Why the step cannot run with the policy enforced, or null when it can. */
    static String skipReason(Backends.Opened opened, PackageIndex index) {
        String never = " The step is skipped: it is never run without an egress policy enforced.";
        if (opened.engine().describe().egressControl() == EgressControl.PROXY && index != null) {
            return null;
        }
        return switch (opened.backend()) {
            case LOCAL, JUPYTER -> "The " + opened.backend().flag() + " backend cannot enforce an egress policy: its "
                    + "programs run on this host, with this host's network." + never + " The sandbox and container "
                    + "backends enforce one (--backend sandbox or --backend container).";
            case E2B -> "E2B enforces an egress policy with its own firewall, and its cloud sandboxes cannot reach the "
                    + "package index this sample serves on this host." + never;
            case KUBERNETES -> "The kubernetes backend does not hold its pods to an egress policy, and its pods "
                    + "cannot reach the package index this sample serves on this host." + never;
            case SANDBOX, CONTAINER -> opened.egressNote() != null
                    ? "The " + opened.backend().flag() + " backend cannot enforce an egress policy here: "
                    + opened.egressNote() + "." + never
                    : "This run has no package index." + never;
        };
    }
}
