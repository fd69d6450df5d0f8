"""`mcpkit` as a person runs it in the sign-in tests: a subprocess with a data folder of its own
(MCPKIT_DATA_DIR) and $BROWSER pointed at a stand-in for the user (`follow_login.py` for an
auto-approving server, `form_login.py` for one with login and consent pages); and what the
tests read back of the token file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BROWSER = f"{sys.executable} {HERE / 'follow_login.py'} %s"
FORM_BROWSER = f"{sys.executable} {HERE / 'form_login.py'} %s"
__all__ = ["BROWSER", "FORM_BROWSER", "kept", "mcpkit", "no_secret_in", "tokens_of"]


def mcpkit(data: Path, *args: str, timeout: float = 60, **env: str
           ) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "MCPKIT_DATA_DIR": str(data), "BROWSER": BROWSER,
               "NO_PROXY": "127.0.0.1", **env}
    environ.pop("MCPKIT_CLIENT_SECRET", None) if "MCPKIT_CLIENT_SECRET" not in env else None
    return subprocess.run([sys.executable, "-m", "mcpkit", *args], capture_output=True,
                          text=True, timeout=timeout, env=environ)


def kept(data: Path) -> dict[str, Any]:
    """The token file, as the test's own data (never printed)."""
    return dict(json.loads((data / "tokens.json").read_text()))


def tokens_of(data: Path, url: str) -> dict[str, Any]:
    by_issuer = kept(data)["tokens"]
    return next(by_resource[url] for by_resource in by_issuer.values() if url in by_resource)


def no_secret_in(data: Path, *outputs: str) -> None:
    for by_resource in kept(data)["tokens"].values():
        for tokens in by_resource.values():
            for secret in (tokens["access_token"], tokens.get("refresh_token")):
                assert not secret or all(secret not in out for out in outputs)
