# Starts a program under a Landlock ruleset that handles EXECUTE and READ_FILE (see ExecAllowList.java).
# argv: ("x:PATH" | "r:PATH")... "--" PROGRAM ARGS...   or   "--probe"
#   x:PATH  the file may be executed and read (an allowed program, the dynamic loader)
#   r:PATH  the file, or everything beneath the directory, may be read
# Fails closed: when Landlock is missing or a rule cannot be added, the program is not started; the reason goes to
# stderr after MARKER and the exit code is 125. A path that does not exist is skipped: a missing rule only denies.
import ctypes, os, platform, signal, sys

MARKER = "codeexec-exec-guard: "


def fail(message):
    sys.stderr.write(MARKER + message + "\n")
    sys.stderr.flush()
    os._exit(125)


def restrict(rules):
    # The syscall numbers are those of x86_64; elsewhere nothing is guessed.
    if platform.machine() != "x86_64":
        fail("unsupported architecture " + platform.machine() + " (x86_64 only)")
    libc = ctypes.CDLL(None, use_errno=True)
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    execute, read_file = 1 << 0, 1 << 2
    abi = syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # LANDLOCK_CREATE_RULESET_VERSION
    if abi < 1:
        fail("Landlock is not available in this kernel (errno %d)" % ctypes.get_errno())
    handled = ctypes.c_uint64(execute | read_file)
    ruleset = syscall(444, ctypes.byref(handled), ctypes.c_size_t(8), ctypes.c_uint32(0))
    if ruleset < 0:
        fail("cannot create a Landlock ruleset (errno %d)" % ctypes.get_errno())

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    for rule in rules:
        if rule[:2] not in ("x:", "r:"):
            fail("bad rule " + repr(rule))
        path = rule[2:]
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        beneath = PathBeneath(execute | read_file if rule[0] == "x" else read_file, fd)
        if syscall(445, ctypes.c_int(ruleset), ctypes.c_int(1), ctypes.byref(beneath), ctypes.c_uint32(0)) != 0:
            fail("cannot add the Landlock rule for %s (errno %d)" % (path, ctypes.get_errno()))
        os.close(fd)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS, which landlock_restrict_self requires
        fail("cannot set no_new_privs (errno %d)" % ctypes.get_errno())
    if syscall(446, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
        fail("cannot enforce the Landlock ruleset (errno %d)" % ctypes.get_errno())
    os.close(ruleset)
    return abi


def main():
    args = sys.argv[1:]
    if args == ["--probe"]:
        print(restrict([]))
        return
    if "--" not in args:
        fail("no program given")
    sep = args.index("--")
    program = args[sep + 1:]
    if not program:
        fail("no program given")
    restrict(args[:sep])
    # Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across exec: give them back.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    try:
        os.execv(program[0], program)
    except OSError as e:
        # As a shell reports it: 126 when the file cannot be executed (Landlock refuses), 127 when it is missing.
        sys.stderr.write("%s: %s\n" % (program[0], e.strerror))
        sys.stderr.flush()
        os._exit(127 if e.errno == 2 else 126)


try:
    main()
except SystemExit:
    raise
except BaseException as e:
    fail("%s: %s" % (type(e).__name__, e))
