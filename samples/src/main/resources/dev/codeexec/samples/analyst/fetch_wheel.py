# Installs a pure-Python wheel without pip: finds it on a simple index page and unpacks it (a wheel is a zip).
# usage: python3 fetch_wheel.py INDEX_URL PACKAGE TARGET_DIR
import io
import re
import sys
import urllib.parse
import urllib.request
import zipfile

index, package, target = sys.argv[1], sys.argv[2], sys.argv[3]
page_url = urllib.parse.urljoin(index, package + "/")
with urllib.request.urlopen(page_url, timeout=30) as r:
    page = r.read().decode("utf-8")
links = re.findall(r'href="([^"]+\.whl)(?:#[^"]*)?"', page)
if not links:
    sys.exit("no wheel of " + package + " on " + page_url)
wheel_url = urllib.parse.urljoin(page_url, links[-1])
with urllib.request.urlopen(wheel_url, timeout=30) as r:
    data = r.read()
zipfile.ZipFile(io.BytesIO(data)).extractall(target)
print("Successfully installed", wheel_url.rsplit("/", 1)[-1], "into", target, "(without pip)")
