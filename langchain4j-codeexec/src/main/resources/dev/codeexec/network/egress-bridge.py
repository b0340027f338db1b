# The forwarder between a sandbox's loopback and the engine's egress proxy (see EgressBridge.java).
# argv: PORT SOCKET SECCOMP "--" [PROGRAM ARGS...]
#   PORT     the TCP port on the sandbox's loopback that the proxy variables point at
#   SOCKET   the proxy's Unix-domain socket, bound into the sandbox
#   SECCOMP  a seccomp program to install before the program (hexadecimal), or "-" for none
# The listening socket is made first, then a forwarder process (a grandchild, so that the program never waits for it
# or reaps it) carries each connection to SOCKET. With a program: the seccomp program is installed only then, so that
# the program cannot open Unix-domain sockets while the forwarder, started before, can; then the program is executed.
# Without one: prints "ready" once the forwarder listens, and exits. Fails closed: when any step fails the program is
# not started; the reason goes to stderr after MARKER and the exit code is 125.
import os, socket, sys, threading

MARKER = "codeexec-egress: "


def fail(message):
    sys.stderr.write(MARKER + message + "\n")
    sys.stderr.flush()
    os._exit(125)


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


UNAVAILABLE = (b"HTTP/1.1 502 the engine's egress proxy is not running; no connection can leave the sandbox\r\n"
               b"X-Proxy-Error: proxy-unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


def serve(client, path):
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        try:
            client.sendall(UNAVAILABLE)  # an HTTP client shows it; any other sees the connection close
        except OSError:
            pass
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
    back.start()
    pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def load_libc():
    # ctypes is not in every minimal image; only the seccomp program needs it.
    try:
        import ctypes
        return ctypes, ctypes.CDLL(None, use_errno=True)
    except (ImportError, OSError):
        return None, None


def forward(listener, path):
    ctypes, libc = load_libc()
    if libc is not None:
        # Not dumpable: a program of the same user cannot read or write this process's memory through /proc.
        libc.prctl(ctypes.c_int(4), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)  # never hold the run's output open
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            continue
        threading.Thread(target=serve, args=(client, path), daemon=True).start()


def main():
    if len(sys.argv) < 5 or sys.argv[4] != "--":
        fail("usage: PORT SOCKET SECCOMP -- [PROGRAM ARGS...]")
    port, path, seccomp, program = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[5:]
    filter_code = None
    if seccomp != "-":
        try:
            filter_code = bytes.fromhex(seccomp)
        except ValueError:
            fail("the seccomp program is not hexadecimal")
        if not filter_code or len(filter_code) % 8:
            fail("the seccomp program is malformed")
    if not os.path.exists(path):
        fail("the egress proxy's socket is not visible at " + path)
    try:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
    except OSError as e:
        fail("cannot listen on 127.0.0.1:%d: %s" % (port, e))
    child = os.fork()
    if child == 0:
        try:
            if os.fork() == 0:
                os.setsid()
                forward(listener, path)
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    listener.close()
    if not program:
        print("ready", flush=True)
        return
    if filter_code is not None:
        install(filter_code)
    try:
        os.execv(program[0], program)
    except OSError as e:
        sys.stderr.write("%s: %s\n" % (program[0], e.strerror))
        sys.stderr.flush()
        os._exit(127)


def install(filter_code):
    ctypes, libc = load_libc()
    if libc is None:
        fail("ctypes is missing: the seccomp program cannot be installed")

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    code = ctypes.create_string_buffer(filter_code, len(filter_code))
    prog = SockFprog(len(filter_code) // 8, ctypes.cast(code, ctypes.c_void_p))
    if libc.prctl(ctypes.c_int(38), ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)):
        fail("cannot set no_new_privs (errno %d)" % ctypes.get_errno())
    if libc.prctl(ctypes.c_int(22), ctypes.c_ulong(2), ctypes.byref(prog), ctypes.c_ulong(0), ctypes.c_ulong(0)):
        fail("cannot install the seccomp program (errno %d)" % ctypes.get_errno())


main()
