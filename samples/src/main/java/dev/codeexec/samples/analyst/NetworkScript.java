package dev.codeexec.samples.analyst;

import dev.codeexec.samples.analyst.AnalystScript.Call;
import dev.codeexec.samples.analyst.AnalystScript.Reply;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The offline model's network step, one tool call per request, each decided by the real results before it: it
 * installs {@value PackageIndex#PACKAGE} from the sample's package index with pip (or, without pip, unpacks the wheel
 * itself), describes the revenue of each sale with it, then tries {@code example.org}, which the egress policy does not
 * allow, and answers with what the proxy said.
 */
final class NetworkScript {

    /** How the user message of the network step starts; the index URL follows. */
    static final String REQUEST_START = "Install tinystats from our package index";

    static final String LIB = "work/lib";
    static final String USE_PY = AnalystScript.resource("use_tinystats.py");
    static final String REACH_PY = AnalystScript.resource("reach.py");
    static final String FETCH_PY = AnalystScript.resource("fetch_wheel.py");

    private static final Pattern INDEX_URL = Pattern.compile("http://[^\\s/]+/simple/");

    private NetworkScript() {
    }

    /** The user message of the network step, for an index at {@code indexUrl}. */
    static String request(String indexUrl) {
        return REQUEST_START + " at " + indexUrl + " into " + LIB + ", and describe the revenue of each sale with it. "
                + "Then check that other hosts are out of reach: try example.org.";
    }

    /** The pip command line for the index at {@code indexUrl}. */
    static String pip(String indexUrl) {
        return "python3 -m pip install --disable-pip-version-check --no-cache-dir --target " + LIB + " --index-url "
                + indexUrl + " --trusted-host " + PackageIndex.HOST + " " + PackageIndex.PACKAGE;
    }

    static Reply next(String user, List<Call> calls) {
        Matcher m = INDEX_URL.matcher(user);
        if (!m.find()) {
            return Reply.text("Which package index? I need its URL, such as http://" + PackageIndex.HOST
                    + ":8080/simple/.");
        }
        String index = m.group();
        String pip = pip(index);
        Optional<Call> install = find(calls, c -> c.is("workspace_exec", "command", pip));
        if (install.isEmpty()) {
            return Reply.tool("workspace_exec", "command", pip);
        }
        Call installed = install.get();
        if (!installed.succeeded() && installed.result() != null && installed.result().contains("No module named pip")) {
            // No pip on this backend: the wheel is a zip of pure Python, so unpacking it installs it.
            if (find(calls, c -> c.is("workspace_write_file", "path", "work/fetch_wheel.py")).isEmpty()) {
                return Reply.tool("workspace_write_file", "path", "work/fetch_wheel.py", "content", FETCH_PY);
            }
            String fetch = "python3 work/fetch_wheel.py " + index + " " + PackageIndex.PACKAGE + " " + LIB;
            Optional<Call> fetched = find(calls, c -> c.is("workspace_exec", "command", fetch));
            if (fetched.isEmpty()) {
                return Reply.tool("workspace_exec", "command", fetch);
            }
            installed = fetched.get();
        }
        Optional<Call> used = Optional.empty();
        if (installed.succeeded()) {
            if (find(calls, c -> c.is("workspace_write_file", "path", "work/use_tinystats.py")).isEmpty()) {
                return Reply.tool("workspace_write_file", "path", "work/use_tinystats.py", "content", USE_PY);
            }
            used = find(calls, c -> c.is("workspace_exec", "command", "python3 work/use_tinystats.py"));
            if (used.isEmpty()) {
                return Reply.tool("workspace_exec", "command", "python3 work/use_tinystats.py");
            }
        }
        if (find(calls, c -> c.is("workspace_write_file", "path", "work/reach.py")).isEmpty()) {
            return Reply.tool("workspace_write_file", "path", "work/reach.py", "content", REACH_PY);
        }
        Optional<Call> reach = find(calls, c -> c.is("workspace_exec", "command", "python3 work/reach.py"));
        if (reach.isEmpty()) {
            return Reply.tool("workspace_exec", "command", "python3 work/reach.py");
        }
        return Reply.text(answer(installed, used, reach.get()));
    }

    private static String answer(Call installed, Optional<Call> used, Call reach) {
        StringBuilder sb = new StringBuilder();
        if (!installed.succeeded()) {
            sb.append("I could not install ").append(PackageIndex.PACKAGE).append(" from the index: ")
                    .append(lastLine(installed.result())).append(".");
        } else {
            sb.append("Installed ").append(PackageIndex.PACKAGE).append(' ').append(PackageIndex.VERSION)
                    .append(" from ").append(PackageIndex.HOST).append(" into ").append(LIB).append(". ");
            Call u = used.orElseThrow();
            if (u.succeeded()) {
                sb.append("Revenue per sale: median ").append(value(u, "median")).append(", mean ")
                        .append(value(u, "mean")).append(", from ").append(value(u, "min")).append(" to ")
                        .append(value(u, "max")).append(" over ").append(value(u, "count")).append(" sales.");
            } else {
                sb.append("But using it failed: ").append(lastLine(u.result())).append(".");
            }
        }
        List<String> tries = reach.result() == null ? List.of() : reach.result().lines()
                .filter(l -> l.contains(" -> ")).map(String::strip).collect(Collectors.toList());
        if (tries.stream().anyMatch(l -> l.contains("-> reached"))) {
            sb.append("\n\nWARNING: example.org was reachable, so no egress policy held this run:\n");
        } else {
            sb.append("\n\nOther hosts are out of reach, as the egress policy says:\n");
        }
        tries.forEach(l -> sb.append("- ").append(l).append('\n'));
        return sb.toString().strip();
    }

    /** The value of a {@code key: value} line of the tinystats output. */
    private static String value(Call c, String key) {
        return c.result().lines().map(String::strip).filter(l -> l.startsWith(key + ": ")).findFirst()
                .map(l -> l.substring(key.length() + 2)).orElse("?");
    }

    private static String lastLine(String s) {
        List<String> lines = s == null ? List.of() : s.strip().lines().toList();
        return lines.isEmpty() ? "no output" : lines.get(lines.size() - 1);
    }

    private static Optional<Call> find(List<Call> calls, Predicate<Call> p) {
        return calls.stream().filter(p).findFirst();
    }
}
