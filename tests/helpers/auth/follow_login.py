"""A stand-in for the user's browser during a sign-in: `python follow_login.py URL` loads the
authorization URL and follows the authorization server's redirects, as a browser would, to the
client's loopback redirect listener (an auto-approving server answers at once). Every hop must
be on 127.0.0.1: the tests reach nothing else. The tests point $BROWSER at it."""

import sys
from urllib.parse import urlsplit

import httpx

HOPS = 5

url = sys.argv[1]
with httpx.Client(trust_env=False, timeout=10, follow_redirects=False) as http:
    for _ in range(HOPS):
        if urlsplit(url).hostname != "127.0.0.1":
            sys.exit(f"follow_login.py: refusing to load {urlsplit(url).netloc!r}; tests stay on "
                     "127.0.0.1")
        answer = http.get(url)
        if not answer.is_redirect:
            sys.exit(0 if answer.status_code == 200 else f"follow_login.py: {answer.status_code}")
        url = str(answer.next_request.url) if answer.next_request else ""
sys.exit("follow_login.py: too many redirects")
