package dev.codeexec.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.WorkspaceIO;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The attack corpus of "a denied program runs although the policy denies it", by class, on the local engine with
 * real files in a workspace: links and copies are made by an earlier call of the same conversation (through the same
 * policy where it allows that), then the attack is one command line.
 *
 * <p>Every attack is first run <em>unchecked</em> (no policy, same workspace contents) and must really start the
 * denied program there: that proves the case is an attack and not a typo. Through the policy it must be refused, and
 * the denied program must not have run. Each class has positive controls: the same programs where the policy allows
 * them, and ordinary commands, run.
 *
 * <p>The denied program is {@code id} (its output shows {@code uid=}), a copy of an interpreter whose inline code
 * writes a marker file, or {@code mark}: a script outside the workspace that writes the marker file, denied by name.
 */
class CommandIdentityAttackIT {

    private static final String LOADER = "/lib64/ld-linux-x86-64.so.2";
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final AtomicInteger CONVERSATIONS = new AtomicInteger();

    private static Path base;
    private static Path ran;
    private static String mark;
    private static LocalEngine engine;

    /** What the policy of a case is: deny-only (the denied programs), or an allow list naming the wrapper too. */
    enum Kind { DENY_ONLY, ALLOW_LIST }

    /**
     * @param cls      the class of the attack (for the report)
     * @param requires programs the case needs on this host
     * @param setup    earlier calls: {@code put:path:content} writes a file with the file tools, anything else is a
     *                 command line run in the same workspace (through the policy in the checked run)
     * @param allow    the allow list of an {@link Kind#ALLOW_LIST} case (the wrapper and the setup's commands)
     * @param attack   the command line of the attack
     * @param cwd      its working directory, or null
     */
    record Case(String cls, List<String> requires, List<String> setup, List<String> allow, String attack, String cwd) {
        @Override
        public String toString() {
            return cls + ": " + attack + (cwd == null ? "" : " (in " + cwd + ")");
        }
    }

    @BeforeAll
    static void start() throws IOException {
        base = Files.createTempDirectory("identity-attacks");
        Path bin = Files.createDirectories(base.resolve("bin"));
        ran = base.resolve("ran");
        Path m = bin.resolve("mark");
        Files.writeString(m, "#!/bin/sh\n: > '" + ran + "'\n");
        Files.setPosixFilePermissions(m, PosixFilePermissions.fromString("rwxr-xr-x"));
        mark = m.toString();
        engine = LocalEngine.builder().rootDir(Files.createDirectories(base.resolve("ws"))).build();
    }

    @AfterAll
    static void stop() {
        if (engine != null) {
            engine.close();
        }
    }

    private static Case c(String cls, String requires, String setup, String allow, String attack) {
        return new Case(cls, words(requires), setup.isEmpty() ? List.of() : List.of(setup.split(" ;; ")),
                words(allow), attack, null);
    }

    private static List<String> words(String s) {
        return s.isBlank() ? List.of() : List.of(s.trim().split(" +"));
    }

    static Stream<Case> corpus() {
        String py = "\"open('RANFILE','w')\"";
        List<Case> cases = new ArrayList<>(List.of(
                // (a) programs that run a program named in their arguments, outside the catalogue
                c("wrapper", "make", "put:work/Makefile:x:\n\t@true\n", "make",
                        "make -f work/Makefile SHELL=MARK x"),
                c("wrapper", "make", "", "make", "make -f /dev/null '--eval=x: ; @MARK' x"),
                c("wrapper", "make cc", "put:work/a.c:int main(void){return 0;}\n", "make",
                        "make CC=MARK work/a"),
                c("wrapper", "gcc", "put:work/a.c:int main(void){return 0;}\n", "gcc",
                        "gcc -wrapper MARK -c work/a.c -o work/a.o"),
                c("wrapper", "gcc", "put:work/a.c:int main(void){return 0;}\n ;; mkdir -p work/t"
                        + " ;; ln -s MARK work/t/cc1", "gcc mkdir ln", "gcc -Bwork/t/ -c work/a.c -o work/a.o"),
                c("wrapper", "ssh", "", "ssh", "ssh -o ProxyCommand=MARK -o BatchMode=yes h true"),
                c("wrapper", "scp", "", "scp", "scp -S MARK -o BatchMode=yes h:x work/y"),
                c("wrapper", "zip", "put:work/a.txt:a\n", "zip", "zip -T -TT MARK work/z.zip work/a.txt"),
                c("wrapper", "sdiff", "put:work/a.txt:a\n ;; put:work/b.txt:b\n", "sdiff",
                        "sdiff --diff-program=MARK work/a.txt work/b.txt"),
                c("wrapper", "install", "put:work/a.txt:a\n", "install",
                        "install -s --strip-program=MARK work/a.txt work/b.txt"),
                c("wrapper", "timeout", "ln -s /usr/bin/timeout work/t", "ln", "work/t 5 MARK"),
                c("wrapper", "flock", "", "flock", "flock work/lock MARK"),
                c("wrapper", "strace", "", "strace", "strace -o /dev/null MARK"),
                c("wrapper", "script", "", "script", "script -qc MARK /dev/null"),
                c("wrapper", "gdb", "", "gdb", "gdb -batch -ex run --args /usr/bin/id"),
                c("wrapper", "valgrind", "", "valgrind", "valgrind -q MARK"),
                c("wrapper", "vim", "", "vim", "vim -es -c '!MARK' -c qa"),
                // (b) interpreters and programs under another name
                c("renamed", "", "cp /usr/bin/id work/calc", "cp", "work/calc"),
                c("renamed", "/usr/bin/python3", "cp /usr/bin/python3 work/calc", "cp", "work/calc -c " + py),
                c("renamed", "/usr/bin/python3", "cp /usr/bin/python3 work/calc ;; trusted:printf x >> work/calc",
                        "cp", "work/calc -c " + py),
                c("renamed", "/usr/bin/perl", "cp /usr/bin/perl work/calc", "cp",
                        "work/calc -e \"open(F,'>RANFILE')\""),
                c("renamed", "/bin/dash", "cp /bin/dash work/calc", "cp", "work/calc -c MARK"),
                c("renamed", "", "put:work/s:MARK\n ;; chmod +x work/s", "chmod ./work/s", "./work/s"),
                c("renamed", "", "put:work/s:#!/bin/sh\nMARK\n ;; chmod +x work/s", "chmod ./work/s", "./work/s"),
                c("renamed", "", "put:work/s:#!/usr/bin/env sh\nMARK\n ;; chmod +x work/s", "chmod ./work/s",
                        "./work/s"),
                c("renamed", "/usr/bin/python3", "put:work/s:#!/usr/bin/python3 -copen('RANFILE','w')\n ;; chmod +x work/s",
                        "chmod ./work/s", "./work/s"),
                // (c) options of allowed interpreters that carry inline code
                c("inline", "perl", "put:work/x.pl:1;\n", "perl", "perl '-Mstrict;open(F,\">RANFILE\")' work/x.pl"),
                c("inline", "node", "put:work/x.js:1\n", "node", "node \"--import=data:text/javascript,import fs"
                        + " from 'node:fs';fs.writeFileSync('RANFILE','')\" work/x.js"),
                c("inline", "node", "put:work/t.test.js:1\n", "node", "node --test \"--test-reporter=data:text/"
                        + "javascript,import fs from 'node:fs';fs.writeFileSync('RANFILE','');export default async"
                        + " function*(s){for await (const e of s){}}\" work/t.test.js"),
                c("inline", "node", "", "node", "node -pe \"require('fs').writeFileSync('RANFILE','')\""),
                c("inline", "python3", "", "python3", "python3 -c " + py),
                // (d) a relative path that an earlier call made a link to a denied program or to the loader
                c("relative", "", "ln -s /usr/bin/id work/i", "ln", "./work/i"),
                c("relative", "", "ln -s /usr/bin/id work/i ;; ln -s i work/j", "ln", "work/j"),
                c("relative", "", "ln -s /usr/bin work/b", "ln", "work/b/id"),
                c("relative", LOADER, "ln -s " + LOADER + " work/l", "ln", "./work/l /usr/bin/id"),
                c("relative", LOADER, "cp " + LOADER + " work/l", "cp", "./work/l /usr/bin/id"),
                c("relative", "", "ln -s /usr/bin/env work/e", "ln", "work/e MARK")));
        cases.add(new Case("relative", List.of(), List.of("ln -s /usr/bin/id work/i"), List.of("ln"), "./i",
                "work"));
        return cases.stream();
    }

    private static String fill(String s) {
        return s.replace("MARK", mark).replace("RANFILE", ran.toString());
    }

    private static CommandPolicy policy(Case c, Kind kind) {
        CommandPolicy.Builder b = CommandPolicy.builder().deny("id", "mark");
        if (kind == Kind.ALLOW_LIST) {
            for (String a : c.allow()) {
                b.allow(fill(a));
            }
            // the allow list names the command as written too: it allows the wrapper or the file
            b.allow(c.attack().split(" ")[0], "true");
        }
        return b.build();
    }

    private static void requirements(Case c) {
        for (String r : c.requires()) {
            Requirements.require(r.startsWith("/") ? Files.isExecutable(Path.of(r))
                    : Requirements.findCommand(r) != null, r);
        }
    }

    /** Runs the setup of {@code c} in {@code io}: files with the file tools, commands as commands. */
    private static void setup(WorkspaceIO io, Case c) {
        for (String step : c.setup()) {
            String s = fill(step.strip());
            if (s.startsWith("put:")) {
                int colon = s.indexOf(':', 4);
                io.putFile(s.substring(4, colon), s.substring(colon + 1));
            } else if (s.startsWith("trusted:")) {
                // an application's run, not the model's: bytes appended to a copy (the same program by build id)
                RunResult r = io.run(RunProgramSpec.builder("sh").args("-c", s.substring(8)).build());
                assertThat(r.exitCode()).as(r.stderr()).isZero();
            } else {
                RunResult r = io.runCommand(s, null, TIMEOUT);
                assertThat(r.exitCode()).as("setup %s: %s", s, r.stderr()).isZero();
            }
        }
    }

    private static boolean ranDenied(RunResult r) throws IOException {
        return Files.deleteIfExists(ran) || r.stdout().contains("uid=");
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("corpus")
    void should_refuse_the_attack_when_it_runs_the_denied_program_unchecked(Case c) throws IOException {
        requirements(c);
        Files.deleteIfExists(ran);
        try (CodeExecution unchecked = CodeExecution.builder().engine(engine).build()) {
            WorkspaceIO io = unchecked.workspace("unchecked-" + CONVERSATIONS.incrementAndGet());
            setup(io, c);
            RunResult r = io.runCommand(fill(c.attack()), c.cwd(), TIMEOUT);
            assertThat(ranDenied(r)).as("the attack must start the denied program when unchecked: %s %s",
                    r.stdout(), r.stderr()).isTrue();
        }
        for (Kind kind : Kind.values()) {
            try (CodeExecution checked = CodeExecution.builder().engine(engine).commandPolicy(policy(c, kind))
                    .build()) {
                WorkspaceIO io = checked.workspace("checked-" + CONVERSATIONS.incrementAndGet());
                setup(io, c);
                assertThatThrownBy(() -> io.runCommand(fill(c.attack()), c.cwd(), TIMEOUT)).as(kind.name())
                        .isInstanceOf(PolicyViolationException.class)
                        .satisfies(e -> assertThat(e.getMessage()).doesNotContain(base.resolve("ws").toString()));
                assertThat(Files.exists(ran)).as("the denied program ran under a %s policy", kind).isFalse();
            }
        }
    }

    /** Positive controls: the same routes to programs the policy does not deny, and everyday commands. */
    static Stream<Case> controls() {
        return Stream.of(
                c("wrapper", "make", "put:work/Makefile:x:\n\t@true\n", "make", "make -f work/Makefile x"),
                c("wrapper", "gcc", "put:work/a.c:int main(void){return 0;}\n", "gcc",
                        "gcc -c work/a.c -o work/a.o"),
                c("wrapper", "zip", "put:work/a.txt:a\n", "zip", "zip work/z.zip work/a.txt"),
                c("wrapper", "install", "put:work/a.txt:a\n", "install", "install -m 644 work/a.txt work/b.txt"),
                c("renamed", "", "cp /usr/bin/wc work/calc", "cp", "work/calc -c work/calc"),
                c("renamed", "/usr/bin/python3", "cp /usr/bin/python3 work/calc ;; put:work/s.py:print(6*7)\n",
                        "cp", "work/calc work/s.py"),
                c("renamed", "python3", "put:work/s:#!/usr/bin/env python3\nprint(6*7)\n ;; chmod +x work/s",
                        "chmod ./work/s", "./work/s"),
                c("renamed", "python3", "put:work/s:#!/usr/bin/python3\nprint(6*7)\n ;; chmod +x work/s",
                        "chmod ./work/s", "./work/s"),
                c("inline", "perl", "put:work/x.pl:print 6*7;\n", "perl", "perl -Mstrict -MO=Deparse work/x.pl"),
                c("inline", "node", "put:work/x.js:console.log(6*7)\n ;; put:work/r.mjs:\n", "node",
                        "node --import=./work/r.mjs work/x.js"),
                c("relative", "", "ln -s /usr/bin/wc work/w", "ln ./work/w", "./work/w -c work/w"),
                c("relative", "", "put:work/a.txt:a\n", "wc", "wc -c work/a.txt"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("controls")
    void should_run_the_same_routes_when_the_program_is_not_denied(Case c) {
        requirements(c);
        for (Kind kind : Kind.values()) {
            try (CodeExecution checked = CodeExecution.builder().engine(engine).commandPolicy(policy(c, kind))
                    .build()) {
                WorkspaceIO io = checked.workspace("control-" + CONVERSATIONS.incrementAndGet());
                io.runCommand("true", null, TIMEOUT);
                setup(io, c);
                RunResult r = io.runCommand(fill(c.attack()), c.cwd(), TIMEOUT);
                assertThat(r.exitCode()).as("%s %s: %s", kind, c, r.stderr()).isIn(0, 1);
            }
        }
    }

    /** The identity attacks on {@code id}, where the policy does not deny it: the copy and the links run. */
    static Stream<Case> undenied() {
        return Stream.of(
                c("renamed", "", "cp /usr/bin/id work/calc", "cp", "work/calc"),
                c("relative", "", "ln -s /usr/bin/id work/i", "ln", "./work/i"),
                c("relative", "", "ln -s /usr/bin/id work/i ;; ln -s i work/j", "ln", "work/j"),
                c("relative", "", "ln -s /usr/bin work/b", "ln", "work/b/id"),
                new Case("relative", List.of(), List.of("ln -s /usr/bin/id work/i"), List.of("ln"), "./i", "work"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("undenied")
    void should_run_the_renamed_program_when_the_policy_does_not_deny_it(Case c) {
        requirements(c);
        try (CodeExecution checked = CodeExecution.builder().engine(engine).commandPolicy(
                CommandPolicy.builder().deny("mark").build()).build()) {
            WorkspaceIO io = checked.workspace("undenied-" + CONVERSATIONS.incrementAndGet());
            setup(io, c);
            RunResult r = io.runCommand(fill(c.attack()), c.cwd(), TIMEOUT);
            assertThat(r.stdout()).as(r.stderr()).contains("uid=");
        }
    }
}
