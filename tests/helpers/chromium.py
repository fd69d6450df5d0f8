"""Where the browser tests find Chromium, and the flags it needs on this kind of machine (no
network beyond loopback: background fetches would fail, many at a time)."""

from __future__ import annotations

from helpers.real_parts import chromium_binary, missing

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    """The browser's path; missing, a failure where every real part is required (CI, which
    installs it) and a skip saying what to install elsewhere (tests/helpers/real_parts.py)."""
    found = chromium_binary()
    if found is None:
        missing("chromium")
    return found
