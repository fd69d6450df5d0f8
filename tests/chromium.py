"""Where the browser tests find Chromium, and the flags it needs on this kind of machine (no
network beyond loopback: background fetches would fail, many at a time)."""

from __future__ import annotations

import os
import shutil

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    """The browser's path; missing, a failure under CI (which installs it) and a skip saying
    what to install elsewhere."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true and chromium is missing: scripts/test installs it with apt-get")
        pytest.skip("chromium is not installed here (apt-get install chromium; CI installs it)")
    return found
