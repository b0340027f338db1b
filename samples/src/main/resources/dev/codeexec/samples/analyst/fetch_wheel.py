# Installs a pure-Python wheel without pip: finds it on a simple index page and unpacks it (a wheel is a zip).
# usage: python3 fetch_wheel.py INDEX_URL PACKAGE TARGET_DIR
# Speaks HTTP itself (a minimal image's Python has no http.client), through the proxy in HTTP_PROXY when there is one,
# and unpacks the zip itself (zipfile needs modules such an image lacks; struct and zlib are built in).
import os
import re
import socket
import struct
import sys
import zlib


def get(url):
    """GETs a plain http:// URL, through the proxy when one is set; returns (status, body)."""
    host_port, _, path = url.split("://", 1)[1].partition("/")
    proxy = os.environ.get("HTTP_PROXY") or os.environ.get("http_proxy")
    if proxy:
        target, request_uri = proxy.split("://", 1)[1].rstrip("/"), url
    else:
        target, request_uri = host_port if ":" in host_port else host_port + ":80", "/" + path
    thost, tport = target.rsplit(":", 1)
    with socket.create_connection((thost, int(tport)), timeout=30) as s:
        s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (request_uri, host_port)).encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if b"transfer-encoding: chunked" in head.lower():
        out, rest = b"", body
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2:]
        body = out
    return status, body


def unzip(data, target):
    """Extracts a zip archive (stored or deflated entries) from its central directory."""
    end = data.rfind(b"PK\x05\x06")
    if end < 0:
        sys.exit("not a zip archive")
    count, _, offset = struct.unpack("<HII", data[end + 10:end + 20])
    pos = offset
    for _ in range(count):
        if data[pos:pos + 4] != b"PK\x01\x02":
            sys.exit("a damaged zip archive")
        method, = struct.unpack("<H", data[pos + 10:pos + 12])
        csize, usize, nlen, xlen, clen = struct.unpack("<IIHHH", data[pos + 20:pos + 34])
        local, = struct.unpack("<I", data[pos + 42:pos + 46])
        name = data[pos + 46:pos + 46 + nlen].decode("utf-8")
        pos += 46 + nlen + xlen + clen
        if name.endswith("/"):
            continue
        if name.startswith("/") or ".." in name.split("/"):
            sys.exit("an unsafe name in the archive: " + name)
        lnlen, lxlen = struct.unpack("<HH", data[local + 26:local + 30])
        raw = data[local + 30 + lnlen + lxlen:local + 30 + lnlen + lxlen + csize]
        content = raw if method == 0 else zlib.decompress(raw, -15)
        if len(content) != usize:
            sys.exit("a damaged entry in the archive: " + name)
        path = os.path.join(target, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(content)


def join(base, ref):
    if "://" in ref:
        return ref
    if ref.startswith("/"):
        scheme, rest = base.split("://", 1)
        return scheme + "://" + rest.split("/", 1)[0] + ref
    base = base.rsplit("/", 1)[0] + "/"
    while ref.startswith("../"):
        base, ref = base.rstrip("/").rsplit("/", 1)[0] + "/", ref[3:]
    return base + ref


index, package, target = sys.argv[1], sys.argv[2], sys.argv[3]
page_url = index.rstrip("/") + "/" + package + "/"
status, page = get(page_url)
if status != 200:
    sys.exit("%s -> %d" % (page_url, status))
links = re.findall(r'href="([^"]+\.whl)(?:#[^"]*)?"', page.decode("utf-8"))
if not links:
    sys.exit("no wheel of " + package + " on " + page_url)
wheel_url = join(page_url, links[-1])
status, data = get(wheel_url)
if status != 200:
    sys.exit("%s -> %d" % (wheel_url, status))
unzip(data, target)
print("Successfully installed", wheel_url.rsplit("/", 1)[-1], "into", target, "(without pip)")
