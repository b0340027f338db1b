# The relay of a kernel inside a boundary (dev.codeexec.jupyter.KernelRelay): started by the engine as an ordinary
# program of the workspace (python3 -I -c <this>), it starts ipykernel as a child in its own session with transport
# "ipc" (Unix sockets in a private 0700 directory: nothing listens on a TCP port; or, where the engine sets
# CODEEXEC_KERNEL_TRANSPORT=tcp, the loopback of a network namespace of the boundary's own) and relays each connection of the
# engine's client as frames over this program's stdin (engine to relay) and stdout (relay to engine).
#
# Frames: [type: 1 byte][connection id: 4 bytes][length: 4 bytes] (big-endian), then the payload.
#   engine to relay: HELLO (id 0, JSON {"key": ...}, first), OPEN (id, payload: the channel's name), DATA, END,
#                    CLOSE, SIGNAL (id 0: SIGINT to the kernel's process group), LOOK (id: the look's number;
#                    whether $OUTPUT_DIR is empty now)
#   relay to engine: READY (id 0: the kernel's sockets exist), DATA, END, CLOSE, EXIT (id 0, payload: the kernel's
#                    exit status), FAIL (id 0, payload: why the kernel cannot start), OUTPUTS (the LOOK's id, payload
#                    b"0" when $OUTPUT_DIR is a real directory with no entry, else b"1")
# The kernel's own stdout and stderr go to this program's stderr. The relay exits with the kernel (killing what is
# left of its process group), and on end of file of its stdin (killing the kernel's group).
# Python standard library only; Python 3.8 or later.
import json
import os
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

HELLO, READY, OPEN, DATA, END, CLOSE, SIGNAL, EXIT, FAIL, LOOK, OUTPUTS = 1, 1, 2, 3, 4, 5, 7, 8, 9, 10, 10
MAX_PAYLOAD = 32768
HEADER = struct.Struct(">BII")
CHANNELS = {"shell": 1, "iopub": 2, "stdin": 3, "control": 4, "hb": 5}
NO_IPYKERNEL = 97
# "tcp" where the boundary refuses Unix sockets but has a network namespace of its own (the sandbox with its network
# restricted: loopback only, reachable from nowhere else): the kernel listens on that private loopback instead.
TCP = os.environ.get("CODEEXEC_KERNEL_TRANSPORT") == "tcp"
LAUNCHER = (
    "import sys, importlib.util\n"
    "if sys.path and sys.path[0] == '':\n"
    "    del sys.path[0]\n"
    "if importlib.util.find_spec('ipykernel') is None:\n"
    "    sys.stderr.write('codeexec-kernel-relay: ipykernel is not importable by ' + sys.executable + '\\n')\n"
    "    sys.exit(%d)\n"
    "from ipykernel import kernelapp\n"
    "kernelapp.launch_new_instance()\n" % NO_IPYKERNEL)


def outputs_empty():
    # Whether $OUTPUT_DIR is a real directory (not a link) with no entry: the engine then skips collecting out/.
    out = os.environ.get("OUTPUT_DIR")
    if not out:
        return False
    try:
        fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        with os.scandir(fd) as entries:
            return next(entries, None) is None
    except OSError:
        return False
    finally:
        os.close(fd)


def log(msg):
    try:
        os.write(2, ("codeexec-kernel-relay: " + msg + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


class Relay:
    def __init__(self, in_fd, out_fd):
        self.in_fd = in_fd
        self.out_fd = out_fd
        self.buf = bytearray()
        self.conns = {}
        self.ended_by_engine = set()  # ids whose engine side sent END
        self.ended_by_kernel = set()  # ids whose kernel side reached its end
        self.sel = selectors.DefaultSelector()
        self.kernel = None
        self.dir = None

    # ---- frames ----

    def send(self, ftype, cid, payload=b""):
        data = HEADER.pack(ftype, cid, len(payload)) + payload
        view = memoryview(data)
        while view:
            n = os.write(self.out_fd, view)
            view = view[n:]

    def frames(self):
        """Whole frames in the buffer, removed from it."""
        while len(self.buf) >= HEADER.size:
            ftype, cid, length = HEADER.unpack_from(self.buf)
            if length > 1 << 20:
                raise ValueError("a frame of %d bytes" % length)
            if len(self.buf) < HEADER.size + length:
                return
            payload = bytes(self.buf[HEADER.size:HEADER.size + length])
            del self.buf[:HEADER.size + length]
            yield ftype, cid, payload

    def read_stdin(self):
        """False at end of file."""
        data = os.read(self.in_fd, 65536)
        if not data:
            return False
        self.buf += data
        return True

    # ---- the kernel ----

    def private_dir(self):
        for base in (os.environ.get("CODEEXEC_KERNEL_TMP"), "/tmp", "/dev/shm", tempfile.gettempdir()):
            if not base:
                continue
            try:
                d = tempfile.mkdtemp(prefix="codeexec-kernel-", dir=base)  # mode 0700
            except OSError:
                continue
            if len(d) < 90:
                return d
            shutil.rmtree(d, ignore_errors=True)
        raise OSError("no directory for the kernel's sockets (tried /tmp, /dev/shm, TMPDIR)")

    def start(self, key):
        self.dir = self.private_dir()
        conn = os.path.join(self.dir, "kernel.json")
        info = {"transport": "ipc", "ip": os.path.join(self.dir, "k"), "signature_scheme": "hmac-sha256",
                "key": key, "kernel_name": "python3"}
        if TCP:
            held = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in CHANNELS]
            for s in held:
                s.bind(("127.0.0.1", 0))
            self.ports = dict(zip(CHANNELS, (s.getsockname()[1] for s in held)))
            for s in held:
                s.close()
            info.update(transport="tcp", ip="127.0.0.1")
        for name, port in CHANNELS.items():
            info[name + "_port"] = self.ports[name] if TCP else port
        fd = os.open(conn, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(info, f)
        env = dict(os.environ)
        env["JPY_PARENT_PID"] = str(os.getpid())  # ipykernel exits when this relay is gone
        self.kernel = subprocess.Popen([sys.executable, "-c", LAUNCHER, "-f", conn], stdin=subprocess.DEVNULL,
                                       stdout=2, stderr=2, start_new_session=True, env=env)

    def socket_path(self, name):
        return os.path.join(self.dir, "k-%d" % CHANNELS[name])

    def address(self, name):
        return ("127.0.0.1", self.ports[name]) if TCP else self.socket_path(name)

    def new_socket(self):
        return socket.socket(socket.AF_INET if TCP else socket.AF_UNIX, socket.SOCK_STREAM)

    def listening(self, name):
        if not TCP:
            return os.path.exists(self.socket_path(name))
        with self.new_socket() as s:
            return s.connect_ex(self.address(name)) == 0

    def wait_for_sockets(self):
        """True once every socket exists; False when the kernel ended first."""
        while True:
            if self.kernel.poll() is not None:
                return False
            if all(self.listening(n) for n in CHANNELS):
                return True
            time.sleep(0.005)

    def kill_group(self, sig=signal.SIGKILL):
        if self.kernel is not None:
            try:
                os.killpg(self.kernel.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def cleanup(self):
        self.kill_group()
        if self.kernel is not None:
            try:
                self.kernel.wait(5)
            except subprocess.TimeoutExpired:
                pass
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def exit_status(self):
        rc = self.kernel.returncode
        return 128 - rc if rc < 0 else rc

    # ---- connections ----

    def open(self, cid, name):
        if cid in self.conns or name not in CHANNELS:
            self.send(CLOSE, cid)
            return
        s = self.new_socket()
        for attempt in range(200):  # the socket file exists a moment before the kernel listens on it
            try:
                s.connect(self.address(name))
                break
            except (ConnectionRefusedError, FileNotFoundError):
                if self.kernel.poll() is not None:
                    break
                time.sleep(0.005)
            except OSError:
                break
        else:
            pass
        try:
            s.getpeername()
        except OSError:
            s.close()
            self.send(CLOSE, cid)
            return
        self.conns[cid] = s
        self.sel.register(s, selectors.EVENT_READ, cid)

    def drop(self, cid, tell):
        s = self.conns.pop(cid, None)
        self.ended_by_engine.discard(cid)
        self.ended_by_kernel.discard(cid)
        if s is None:
            return
        try:
            self.sel.unregister(s)
        except (KeyError, ValueError):
            pass
        s.close()
        if tell:
            self.send(CLOSE, cid)

    def from_engine(self, ftype, cid, payload):
        if ftype == OPEN:
            self.open(cid, payload.decode("ascii", "replace"))
        elif ftype == DATA:
            s = self.conns.get(cid)
            if s is None:
                self.send(CLOSE, cid)
                return
            try:
                s.sendall(payload)
            except OSError:
                self.drop(cid, True)
        elif ftype == END:
            s = self.conns.get(cid)
            if s is not None:
                try:
                    s.shutdown(socket.SHUT_WR)
                except OSError:
                    self.drop(cid, True)
                    return
                self.ended_by_engine.add(cid)
                if cid in self.ended_by_kernel:
                    self.drop(cid, False)
        elif ftype == CLOSE:
            self.drop(cid, False)
        elif ftype == SIGNAL:
            self.kill_group(signal.SIGINT)
        elif ftype == LOOK:
            self.send(OUTPUTS, cid, b"0" if outputs_empty() else b"1")
        else:
            raise ValueError("an unexpected frame of type %d" % ftype)

    def from_kernel(self, s, cid):
        try:
            data = s.recv(MAX_PAYLOAD)
        except OSError:
            self.drop(cid, True)
            return
        if data:
            self.send(DATA, cid, data)
        else:
            self.sel.unregister(s)
            self.send(END, cid)
            self.ended_by_kernel.add(cid)
            if cid in self.ended_by_engine:
                self.drop(cid, False)

    # ---- the loop ----

    def run(self):
        while True:
            for ftype, cid, payload in self.frames():
                if ftype != HELLO:
                    raise ValueError("the first frame is not HELLO")
                return self.serve(json.loads(payload.decode("utf-8"))["key"])
            if not self.read_stdin():
                return 0

    def serve(self, key):
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *a: None)
        self.start(key)
        if not self.wait_for_sockets():
            return self.ended()
        self.send(READY, 0)
        for frame in self.frames():  # what arrived with HELLO
            self.from_engine(*frame)
        self.sel.register(self.in_fd, selectors.EVENT_READ, "stdin")
        self.sel.register(wake_r, selectors.EVENT_READ, "wake")
        while True:
            for k, _ in self.sel.select():
                if k.data == "stdin":
                    if not self.read_stdin():
                        return 0
                    for frame in self.frames():
                        self.from_engine(*frame)
                elif k.data == "wake":
                    try:
                        os.read(wake_r, 512)
                    except BlockingIOError:
                        pass
                elif k.data in self.conns:
                    self.from_kernel(k.fileobj, k.data)
            if self.kernel.poll() is not None:
                return self.ended()

    def ended(self):
        status = self.exit_status()
        if status == NO_IPYKERNEL:
            msg = "ipykernel is not importable by " + sys.executable
            log(msg)
            self.send(FAIL, 0, msg.encode("utf-8", "replace")[:4000])
        else:
            self.send(EXIT, 0, str(status).encode("ascii"))
        return status


def main():
    # Frames own the real stdin and stdout; anything else printed goes to stderr.
    in_fd, out_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    relay = Relay(in_fd, out_fd)
    status = 1
    try:
        status = relay.run()
    except (BrokenPipeError, ConnectionResetError):
        status = 0
    except Exception as e:  # the engine's frames broke the format, or the kernel could not be started
        log("%s: %s" % (type(e).__name__, e))
        status = 1
    finally:
        relay.cleanup()
    os._exit(status)


main()
