# Tries a host the egress policy does not allow, over HTTP and HTTPS, and prints what came back.
import urllib.error
import urllib.request

for url in ("http://example.org/", "https://example.org/"):
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            print(url, "-> reached:", r.status)
    except urllib.error.HTTPError as e:
        body = e.read().decode("utf-8", "replace").strip()
        print(url, "-> refused:", e.code, body or e.reason)
    except (urllib.error.URLError, OSError) as e:
        print(url, "-> refused:", getattr(e, "reason", e))
