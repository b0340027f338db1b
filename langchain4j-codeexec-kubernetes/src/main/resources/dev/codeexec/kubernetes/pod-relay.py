# codeexec-relay: the egress relay of a workspace pod, for images without perl (see pod-relay.pl: the same
# protocol and behaviour, line for line where it can be).
import os, select, socket, struct, sys, time
READY, OPEN, DATA, END, CLOSE, BYE = 1, 2, 3, 4, 5, 6
MAXP, MAXC, HIGH = 32768, 512, 1 << 20
HEAD = struct.Struct('>BII')


def fail(message):
    sys.stderr.write('codeexec-relay: %s\n' % message)
    sys.stderr.flush()
    os._exit(125)


def out(t, k, p=b''):
    b = HEAD.pack(t, k, len(p)) + p
    while b:
        try:
            n = os.write(1, b)
        except InterruptedError:
            continue
        except OSError:
            os._exit(0)
        b = b[n:]


class Conn:
    __slots__ = ('s', 'out', 'eof', 'shut', 'shutdone', 'close')

    def __init__(self, s):
        self.s, self.out, self.eof, self.shut, self.shutdone, self.close = s, b'', False, False, False, False


conns = {}


def settle(k):
    c = conns.get(k)
    if c is None or c.out:
        return
    if c.close or (c.shut and c.eof):
        c.s.close()
        del conns[k]
        if not c.close:
            out(CLOSE, k)
    elif c.shut and not c.shutdone:
        try:
            c.s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        c.shutdone = True


def drop(k):
    conns.pop(k).s.close()
    out(CLOSE, k)


def bad():
    sys.stderr.write('codeexec-relay: a malformed frame from the engine\n')
    sys.stderr.flush()
    os._exit(3)


def frames(buf):
    while len(buf) >= 9:
        t, k, n = HEAD.unpack_from(buf)
        if t == DATA:
            if n > MAXP:
                bad()
        elif t in (END, CLOSE, BYE):
            if n:
                bad()
        else:
            bad()
        if len(buf) < 9 + n:
            break
        p, buf = buf[9:9 + n], buf[9 + n:]
        if t == BYE:
            os._exit(0)
        c = conns.get(k)
        if c is None:
            if t != CLOSE:
                out(CLOSE, k)  # not ours (any more): the engine forgets it too
            continue
        if t == DATA:
            if not (c.shut or c.close):
                c.out += p
        elif t == END:
            c.shut = True
        else:
            c.close = c.eof = True
        settle(k)
    return buf


def main():
    port = int(sys.argv[1])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    error = None
    for _ in range(100):
        try:
            listener.bind(('127.0.0.1', port))
            break
        except OSError as e:
            error = e
            time.sleep(0.1)  # a relay that is ending may hold the port a moment longer
    else:
        fail('cannot listen on 127.0.0.1:%d: %s' % (port, error))
    listener.listen(128)
    listener.setblocking(False)
    buf, last = b'', 0
    out(READY, 0)
    while True:
        r, w = [], []
        if sum(len(c.out) for c in conns.values()) < HIGH:
            r.append(0)
        if len(conns) < MAXC:
            r.append(listener)
        for c in conns.values():
            if not c.eof:
                r.append(c.s)
            if c.out:
                w.append(c.s)
        try:
            rr, ww, _ = select.select(r, w, [])
        except InterruptedError:
            continue
        if listener in rr:
            try:
                s, _ = listener.accept()
                s.setblocking(False)
                last += 1
                conns[last] = Conn(s)
                out(OPEN, last)
            except (BlockingIOError, InterruptedError):
                pass
        for k in list(conns):
            c = conns.get(k)
            if c is None:
                continue
            if c.out and c.s in ww:
                try:
                    c.out = c.out[c.s.send(c.out):]
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    drop(k)
                    continue
            if not c.eof and c.s in rr:
                try:
                    d = c.s.recv(MAXP)
                except (BlockingIOError, InterruptedError):
                    d = None
                except OSError:
                    drop(k)
                    continue
                if d:
                    out(DATA, k, d)
                elif d is not None:
                    c.eof = True
                    out(END, k)
            settle(k)
        if 0 in rr:
            try:
                d = os.read(0, 65536)
            except InterruptedError:
                continue
            if not d:
                os._exit(0)
            buf = frames(buf + d)


main()
