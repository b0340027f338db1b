package dev.codeexec.sandbox;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A helper script of this module that starts a run's program inside bubblewrap after doing what only the last
 * process before the program can do (a Landlock ruleset, a forwarder and a seccomp filter). Run by the host's own
 * Python in isolated mode, its code passed as {@code -c} and every value as an argument of its own: nothing is
 * spliced into code.
 */
record PythonHelper(String name, String code) {

    /** The Python that runs helpers; another one (a venv, a build of its own) may lack ctypes. */
    static final String PYTHON = "/usr/bin/python3";

    /** Loads a helper script from this module's resources. */
    static PythonHelper load(String resource) {
        try (InputStream in = PythonHelper.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing from the sandbox module");
            }
            return new PythonHelper(resource, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + resource, e);
        }
    }

    /** The argv that runs the helper with these arguments. */
    List<String> argv(List<String> args) {
        List<String> a = new ArrayList<>(List.of(PYTHON, "-I", "-S", "-c", code));
        a.addAll(args);
        return a;
    }
}
