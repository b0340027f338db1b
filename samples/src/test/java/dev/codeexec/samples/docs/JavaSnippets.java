package dev.codeexec.samples.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * The Java snippets of Markdown pages ({@code ```java} blocks), and the one way to compile them: each with the imports
 * it shows and nothing else, against the class path of the running tests (every module of the library, LangChain4j,
 * Spring's annotations), so a snippet that names a type it does not import, or an API that changed, fails to compile.
 *
 * <p>A snippet is its imports, then either declarations (it starts with an annotation, a modifier or a type keyword)
 * or statements. Either is compiled inside a class of its own, statements in a method body. What a snippet takes as
 * given ({@code engine}, {@code model}: the reader's own objects) is declared by a comment right above the block, which
 * Markdown does not show:
 *
 * <pre>
 * &lt;!-- snippet: dev.codeexec.engine.Engine engine; dev.langchain4j.model.chat.ChatModel model; --&gt;
 * </pre>
 *
 * Its text is class-body declarations compiled before the snippet; it names types fully qualified, so it can never
 * stand in for an import the snippet lacks. An outline of a class (a body partly elided) may be given the members it
 * elides: {@code | in MyEngine: boolean isExecutableInside(String path) { return true; }} after the outer
 * declarations adds them at the top of the snippet's class {@code MyEngine}. {@code <!-- snippet: excerpt -->} marks
 * lines cut out of a larger class (not a unit of their own): only its imports are compiled. An elision ({@code ...}
 * where Java allows none) is compiled as nothing, and as a body that throws where it is a method's whole body
 * ({@code ) { ... }}).
 */
public final class JavaSnippets {

    private static final Pattern IMPORT = Pattern.compile("^import\\s+(static\\s+)?[\\w.]+(\\.\\*)?\\s*;.*$");
    private static final Pattern DECLARATION = Pattern.compile(
            "^(@[A-Za-z]|(public|protected|private|static|final|abstract|sealed|class|interface|record|enum)\\b)");
    private static final Pattern ELIDED_BODY = Pattern.compile("\\)(\\s*)\\{\\s*\\.\\.\\.\\s*}");
    private static final Pattern ELISION = Pattern.compile("(?<![\\w>\\]])\\.\\.\\.");
    private static final String EXCERPT = "excerpt";

    /**
     * One {@code ```java} block.
     *
     * @param page    the page, as the failure names it
     * @param line    the line of the opening fence (1-based)
     * @param code    the block's text, without the fences and the block's indentation
     * @param context the declarations of the comment above it, {@code excerpt}, or empty
     */
    public record Snippet(String page, int line, String code, String context) {

        /** The import lines the snippet shows, as shown. */
        public List<String> imports() {
            return code.lines().takeWhile(l -> l.isBlank() || IMPORT.matcher(l.strip()).matches())
                    .filter(l -> !l.isBlank()).toList();
        }

        /** What follows the imports. */
        public String body() {
            List<String> lines = code.lines().toList();
            int i = 0;
            while (i < lines.size() && (lines.get(i).isBlank() || IMPORT.matcher(lines.get(i).strip()).matches())) {
                i++;
            }
            return String.join("\n", lines.subList(i, lines.size()));
        }

        public boolean isExcerpt() {
            return context.equals(EXCERPT);
        }

        @Override
        public String toString() {
            return page + ":" + line;
        }
    }

    private JavaSnippets() {
    }

    /** The {@code ```java} blocks of a Markdown page, in order. */
    public static List<Snippet> read(Path page, String name) {
        List<String> lines;
        try {
            lines = Files.readAllLines(page);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Snippet> snippets = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String fence = lines.get(i);
            String indent = fence.substring(0, fence.length() - fence.stripLeading().length());
            if (!fence.strip().equals("```java")) {
                continue;
            }
            int start = i;
            StringBuilder code = new StringBuilder();
            for (i++; i < lines.size() && !lines.get(i).strip().equals("```"); i++) {
                String l = lines.get(i);
                code.append(l.startsWith(indent) ? l.substring(indent.length()) : l.strip()).append('\n');
            }
            snippets.add(new Snippet(name, start + 1, code.toString().stripTrailing(), contextAbove(lines, start)));
        }
        return snippets;
    }

    /** The text of a {@code <!-- snippet: ... -->} comment that ends on the line above the fence, or "". */
    private static String contextAbove(List<String> lines, int fence) {
        if (fence == 0 || !lines.get(fence - 1).strip().endsWith("-->")) {
            return "";
        }
        StringBuilder text = new StringBuilder();
        for (int i = fence - 1; i >= 0; i--) {
            text.insert(0, lines.get(i).strip() + "\n");
            if (lines.get(i).contains("<!--")) {
                Matcher m = Pattern.compile("<!--\\s*snippet:(.*)-->", Pattern.DOTALL).matcher(text.toString().strip());
                return m.matches() ? m.group(1).strip() : "";
            }
        }
        return "";
    }

    /**
     * Compiles every snippet, each as its own compilation unit, in one compiler run.
     *
     * @return the errors of each snippet that did not compile (its unit, numbered, then the compiler's messages);
     *         empty when all compile
     */
    public static Map<Snippet, String> compile(List<Snippet> snippets, Path classesDir) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        Map<String, Snippet> byClass = new LinkedHashMap<>();
        List<JavaFileObject> units = new ArrayList<>();
        for (Snippet s : snippets) {
            String cls = className(s, byClass.size());
            byClass.put(cls, s);
            units.add(new Source(cls, unit(s, cls)));
        }
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, null)) {
            List<String> options = List.of("-classpath", System.getProperty("java.class.path"), "-d",
                    classesDir.toString(), "-proc:none", "-Xlint:none", "-Xmaxerrs", "10000");
            javac.getTask(null, files, diagnostics, options, null, units).call();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<Snippet, String> failures = new LinkedHashMap<>();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR || !(d.getSource() instanceof Source src)) {
                continue;
            }
            Snippet s = byClass.get(src.cls);
            String before = failures.getOrDefault(s, numbered(src.text));
            failures.put(s, before + "\n  line " + d.getLineNumber() + ": " + d.getMessage(Locale.ROOT));
        }
        return failures;
    }

    /** The compilation unit of a snippet: its imports, then a class with the context and the snippet. */
    static String unit(Snippet s, String cls) {
        StringBuilder u = new StringBuilder("package snippets;\n\n");
        s.imports().forEach(i -> u.append(i).append('\n'));
        u.append("\n@SuppressWarnings(\"all\")\nabstract class ").append(cls).append(" {\n");
        if (s.isExcerpt()) {
            return u.append("}\n").toString();
        }
        // The context: declarations of the wrapper class, then "| in Name: members" for the snippet's own classes.
        String[] parts = s.context().split("\\|\\s*in\\s+(?=\\w+\\s*:)");
        u.append(parts[0]).append('\n');
        String body = ELISION.matcher(ELIDED_BODY.matcher(s.body())
                .replaceAll(")$1{ throw new UnsupportedOperationException(); }")).replaceAll("/* ... */");
        for (int p = 1; p < parts.length; p++) {
            String name = parts[p].substring(0, parts[p].indexOf(':')).strip();
            String members = parts[p].substring(parts[p].indexOf(':') + 1).strip();
            Matcher decl = Pattern.compile("\\b(class|interface|enum|record)\\s+" + name + "\\b[^{]*\\{").matcher(body);
            if (!decl.find()) {
                throw new IllegalArgumentException(s + ": its context adds members to " + name
                        + ", which the snippet does not declare");
            }
            body = body.substring(0, decl.end()) + " " + members + body.substring(decl.end());
        }
        boolean declarations = body.lines().map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("//")).findFirst()
                .map(l -> DECLARATION.matcher(l).find()).orElse(true);
        if (declarations) {
            u.append(body).append('\n');
        } else {
            u.append("void snippet() throws Exception {\n").append(body).append("\n}\n");
        }
        return u.append("}\n").toString();
    }

    private static String className(Snippet s, int n) {
        String page = s.page().replaceAll("\\.md$", "").replaceAll("[^A-Za-z0-9]", "_");
        return "Snippet_" + page + "_line" + s.line() + "_" + n;
    }

    private static String numbered(String text) {
        StringBuilder sb = new StringBuilder();
        List<String> lines = text.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            sb.append(String.format("%4d  %s%n", i + 1, lines.get(i)));
        }
        return sb.toString().stripTrailing();
    }

    /** A unit held in memory. */
    private static final class Source extends SimpleJavaFileObject {
        final String cls;
        final String text;

        Source(String cls, String text) {
            super(URI.create("string:///snippets/" + cls + ".java"), Kind.SOURCE);
            this.cls = cls;
            this.text = text;
        }

        @Override
        public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return text;
        }
    }
}
