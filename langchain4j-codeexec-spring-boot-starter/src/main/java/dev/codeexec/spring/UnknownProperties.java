package dev.codeexec.spring;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Keys under {@code codeexec} that no property binds: a misspelt key would otherwise be a setting silently not applied
 * ({@code codeexec.sandbox.netwrok=enabled}).
 *
 * <p>Which keys are unknown is what Spring's binder itself leaves unbound ({@link NoUnboundElementsBindHandler} over
 * {@link CodeExecProperties}), so relaxed binding (kebab-case, camelCase, the environment variable forms), list
 * indexes and map entries ({@code codeexec.e2b.metadata.*}) count exactly as they bind. The nearest valid key comes from
 * the configuration metadata the annotation processor generates from the same classes.
 *
 * <p>The OS environment and the JVM's system properties are shared with other programs and libraries (build tools set
 * {@code CODEEXEC_*} variables of their own), so an unknown key from them never stops the start-up: it is logged as a
 * warning when it is close to a property (a likely typo), else at debug level.
 */
final class UnknownProperties {

    private static final Logger log = LoggerFactory.getLogger(UnknownProperties.class);

    static final String PREFIX = "codeexec";

    private static final String METADATA = "META-INF/spring-configuration-metadata.json";

    /**
     * The most edits (insertions, deletions, substitutions, swaps of neighbours) between an unknown key and a property
     * for the property to be suggested; past it, a suggestion would more likely mislead than help.
     */
    private static final int MAX_DISTANCE = 3;

    private UnknownProperties() {
    }

    /**
     * A key no property binds.
     *
     * @param name        the key, in its canonical form ({@code codeexec.sandbox.netwrok})
     * @param origin      where it is set (a file and line, an environment variable), or null when unknown
     * @param suggestions the nearest properties, best first; empty when none is close
     * @param shared      whether it is set only in the OS environment or the JVM's system properties
     */
    record Unknown(String name, String origin, List<String> suggestions, boolean shared) {

        /** One line: the key, where it is set, and the nearest properties. */
        String describe() {
            return name + (origin == null ? "" : " (" + origin + ")") + ": " + (suggestions.isEmpty()
                    ? "no property is close to it" : "did you mean " + String.join(" or ", suggestions) + "?");
        }
    }

    /**
     * Fails on the unknown keys of the application's own property sources, unless {@code ignore}; logs the others.
     *
     * @throws UnknownPropertiesException naming each unknown key and the nearest properties
     */
    static void check(Environment environment, ClassLoader loader, boolean ignore) {
        List<Unknown> unknown = find(environment, loader);
        List<Unknown> fatal = new ArrayList<>();
        for (Unknown u : unknown) {
            if (!u.shared() && !ignore) {
                fatal.add(u);
            } else if (u.shared() && u.suggestions().isEmpty()) {
                log.debug("Not a codeexec property, ignored: {} (the OS environment and system properties, where it "
                        + "is set, also serve other programs)", u.name() + (u.origin() == null ? "" : " from "
                        + u.origin()));
            } else {
                log.warn("Unknown codeexec property, ignored: {}", u.describe());
            }
        }
        if (!fatal.isEmpty()) {
            throw new UnknownPropertiesException(fatal);
        }
    }

    /** The keys under {@code codeexec} the binder leaves unbound, in name order. */
    static List<Unknown> find(Environment environment, ClassLoader loader) {
        Set<ConfigurationProperty> unbound;
        try {
            Binder.get(environment).bind(PREFIX, Bindable.ofInstance(new CodeExecProperties()),
                    new NoUnboundElementsBindHandler(BindHandler.DEFAULT));
            return List.of();
        } catch (BindException e) {
            if (!(e.getCause() instanceof UnboundConfigurationPropertiesException u)) {
                // A value that does not convert: the binding of the properties bean reports it, naming the property.
                return List.of();
            }
            unbound = u.getUnboundProperties();
        }
        List<Candidate> candidates = candidates(loader);
        Iterable<ConfigurationPropertySource> sources = ConfigurationPropertySources.get(environment);
        List<Unknown> out = new ArrayList<>();
        for (ConfigurationProperty p : unbound) {
            ConfigurationPropertyName name = p.getName();
            // The binder reports a key once, from the first source that has it: a key of the application's own
            // sources must not pass as shared because a system property spells it too.
            ConfigurationProperty own = ownProperty(sources, name);
            if (own == null && p.getSource().getUnderlyingSource() instanceof SystemEnvironmentPropertySource
                    && isLegacyVariable(name, candidates)) {
                continue;
            }
            ConfigurationProperty shown = own != null ? own : p;
            // A shared source's key is only worth a warning when it looks like a typo: another tool's CODEEXEC_IMAGE
            // is not a misplaced codeexec.container.image.
            out.add(new Unknown(name.toString(), shown.getOrigin() == null ? null : shown.getOrigin().toString(),
                    nearest(name, candidates, own != null), own == null));
        }
        return out;
    }

    /**
     * Whether {@code name} comes from a variable that spells a property's dashes as underscores
     * ({@code CODEEXEC_SANDBOX_ROOT_DIR}): the binder binds it to the property ({@code codeexec.sandbox.root-dir}),
     * though the variable's own name reads {@code codeexec.sandbox.root.dir}.
     */
    private static boolean isLegacyVariable(ConfigurationPropertyName name, List<Candidate> candidates) {
        String n = name.toString();
        for (Candidate c : candidates) {
            String legacy = c.name().replace('-', '.');
            if (n.equals(legacy) || (c.map() && n.startsWith(legacy + "."))) {
                return true;
            }
        }
        return false;
    }

    private static ConfigurationProperty ownProperty(Iterable<ConfigurationPropertySource> sources,
                                                     ConfigurationPropertyName name) {
        for (ConfigurationPropertySource source : sources) {
            if (!isShared(source.getUnderlyingSource())) {
                ConfigurationProperty p = source.getConfigurationProperty(name);
                if (p != null) {
                    return p;
                }
            }
        }
        return null;
    }

    /** The OS environment and the JVM's system properties, as Spring's own check of unbound keys also spares them. */
    private static boolean isShared(Object source) {
        if (source instanceof SystemEnvironmentPropertySource) {
            return true;
        }
        return source instanceof PropertySource<?> ps
                && StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME.equals(ps.getName());
    }

    /** A property of the metadata; a map's entries are keys below it. */
    record Candidate(String name, ConfigurationPropertyName parsed, boolean map) {
    }

    /** The {@code codeexec} properties of the configuration metadata on the class path. */
    static List<Candidate> candidates(ClassLoader loader) {
        List<Candidate> out = new ArrayList<>();
        try {
            Enumeration<URL> resources = loader.getResources(METADATA);
            for (URL url : Collections.list(resources)) {
                String json;
                try (InputStream in = url.openStream()) {
                    json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                if (!json.contains("\"" + PREFIX + ".")) {
                    continue; // another library's metadata: not parsed at all
                }
                Object properties = JsonParserFactory.getJsonParser().parseMap(json).get("properties");
                if (!(properties instanceof List<?> list)) {
                    continue;
                }
                for (Object o : list) {
                    if (o instanceof Map<?, ?> m && m.get("name") instanceof String name
                            && name.startsWith(PREFIX + ".")) {
                        Object type = m.get("type");
                        out.add(new Candidate(name, ConfigurationPropertyName.of(name),
                                type instanceof String t && t.startsWith("java.util.Map<")));
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + METADATA, e);
        }
        return out;
    }

    /**
     * The properties nearest to {@code name}: those within {@link #MAX_DISTANCE} edits of it, else, with
     * {@code sameLastPart}, those with its last part (a known setting under the wrong group, such as
     * {@code codeexec.image}). Best first, at most three.
     */
    static List<String> nearest(ConfigurationPropertyName name, List<Candidate> candidates, boolean sameLastPart) {
        ConfigurationPropertyName key = name;
        while (key.getNumberOfElements() > 1 && key.isLastElementIndexed()) {
            key = key.getParent(); // codeexec.policy.alow[0] is the key codeexec.policy.alow
        }
        int best = MAX_DISTANCE + 1;
        List<String> out = new ArrayList<>();
        for (Candidate c : candidates) {
            ConfigurationPropertyName compared = key;
            String suggestion = c.name();
            if (c.map() && key.getNumberOfElements() > c.parsed().getNumberOfElements()) {
                // codeexec.e2b.metdata.team: compare the map's part, and keep the entry's key
                compared = key.chop(c.parsed().getNumberOfElements());
                suggestion = c.name() + key.toString().substring(compared.toString().length());
            }
            int d = distance(uniform(compared), uniform(c.parsed()));
            if (d < best) {
                best = d;
                out.clear();
            }
            if (d == best && !out.contains(suggestion)) {
                out.add(suggestion);
            }
        }
        if (out.isEmpty() && sameLastPart) {
            String last = key.getLastElement(Form.UNIFORM);
            for (Candidate c : candidates) {
                if (c.parsed().getLastElement(Form.UNIFORM).equals(last)) {
                    out.add(c.name());
                }
            }
        }
        String index = name.toString().substring(key.toString().length()); // [0], kept on the suggestion
        return out.stream().limit(3).map(n -> n + index).toList();
    }

    /** The name as relaxed binding compares it: lower case, no dashes, its parts joined with dots. */
    private static String uniform(ConfigurationPropertyName name) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < name.getNumberOfElements(); i++) {
            b.append(i == 0 ? "" : ".").append(name.getElement(i, Form.UNIFORM));
        }
        return b.toString();
    }

    /**
     * The optimal string alignment distance: Levenshtein's, with a swap of two neighbours as one edit (the usual
     * typo). Written here, not taken from a library, so that the starter brings no dependency for a hint.
     */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
