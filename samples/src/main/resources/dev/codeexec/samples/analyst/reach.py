# Tries a host the egress policy does not allow, over HTTP and HTTPS, and prints what came back.
# Speaks to the egress proxy in HTTP_PROXY itself (a minimal image's Python has no http.client): a plain request for
# http://, a CONNECT tunnel for https://, as any client would.
import os
import socket

proxy = os.environ["HTTP_PROXY"].split("://", 1)[1].rstrip("/")
phost, pport = proxy.rsplit(":", 1)

for url, request in (("http://example.org/", "GET http://example.org/ HTTP/1.1\r\nHost: example.org\r\n\r\n"),
                     ("https://example.org/", "CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n")):
    try:
        with socket.create_connection((phost, int(pport)), timeout=30) as s:
            s.sendall(request.encode())
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = s.recv(4096)
                if not chunk:
                    break
                head += chunk
        status_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = status_line.split(" ", 2)
        if len(parts) == 3 and parts[1] in ("200",):
            print(url, "-> reached:", parts[1])
        else:
            print(url, "-> refused:", parts[1] if len(parts) > 1 else "?", parts[2] if len(parts) > 2 else "")
    except OSError as e:
        print(url, "-> refused:", e)
