# The kernel of FakeInterpreter: one python process per context, state kept between cells. Reads one request per
# line on stdin ({"code": ..., "env": {...}}) and writes the code interpreter's items on stdout, one JSON object per
# line, as the server sends them (json.dumps separators): stdout/stderr with a timestamp, number_of_executions,
# result (text, png/html from _repr_png_/_repr_html_, is_main_result), error (name, value, traceback), and
# end_of_execution. A SIGINT during a cell raises KeyboardInterrupt in it, as a kernel's interrupt does; between
# cells it is ignored.
import ast
import base64
import datetime
import io
import json
import os
import signal
import sys
import traceback

out = sys.stdout
running = False


def emit(obj):
    out.write(json.dumps(obj) + "\n")
    out.flush()


def on_int(signum, frame):
    if running:
        raise KeyboardInterrupt()


signal.signal(signal.SIGINT, on_int)


class Stream(io.TextIOBase):
    def __init__(self, name):
        self.name = name

    def write(self, s):
        if s:
            emit({"type": self.name, "text": s,
                  "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat()})
        return len(s)

    def flush(self):
        pass


def result(value, main):
    item = {"type": "result"}
    text = repr(value)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    item["text"] = text
    png = getattr(value, "_repr_png_", None)
    if png is not None:
        item["png"] = base64.b64encode(png()).decode("ascii")
    html = getattr(value, "_repr_html_", None)
    if html is not None:
        item["html"] = html()
    item["is_main_result"] = main
    emit(item)


namespace = {"__name__": "__main__", "display": lambda obj: result(obj, False)}
count = 0

for line in sys.stdin:
    request = json.loads(line)
    env = request.get("env") or {}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    count += 1
    emit({"type": "number_of_executions", "execution_count": count})
    sys.stdout, sys.stderr = Stream("stdout"), Stream("stderr")
    running = True
    try:
        tree = ast.parse(request["code"], mode="exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<cell>", "exec"), namespace)
        if last is not None:
            value = eval(compile(last, "<cell>", "eval"), namespace)
            if value is not None:
                result(value, True)
    except BaseException as e:
        running = False
        tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
        emit({"type": "error", "name": type(e).__name__, "value": str(e), "traceback": tb})
    finally:
        running = False
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    emit({"type": "end_of_execution"})
