"""A stand-in for the user's browser: `python visit_page.py URL` loads the page (loopback only),
as a browser opened by `webbrowser` would. The tests point $BROWSER at it."""

import sys
import urllib.request
from urllib.parse import urlsplit

url = sys.argv[1]
if urlsplit(url).hostname != "127.0.0.1":
    sys.exit(f"visit_page.py: refusing to load {url!r}; tests visit 127.0.0.1 only")
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
opener.open(url, timeout=5).read()
