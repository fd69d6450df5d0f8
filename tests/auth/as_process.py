"""The real authorization server (`authorization_server.py`, authlib) as a process, and the
admin calls the tests make on it."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
AS_SCRIPT = HERE / "authorization_server.py"
__all__ = ["AuthServer"]

START_BOUND = 30.0
"""The longest the server may take to print its address (a busy machine, RSA key made)."""


@dataclass
class AuthServer:
    """One running authorization server process and what it printed when it started."""

    process: subprocess.Popen[str]
    issuer: str
    introspection_client_id: str
    introspection_client_secret: str

    @classmethod
    def start(cls, *flags: str) -> AuthServer:
        process = subprocess.Popen(
            [sys.executable, str(AS_SCRIPT), *flags], stdout=subprocess.PIPE, text=True,
            env={**os.environ, "NO_PROXY": "127.0.0.1"})
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], START_BOUND)
        line = process.stdout.readline() if ready else ""
        if not line:
            process.kill()
            process.wait()
            raise AssertionError(f"the authorization server did not start: {process.returncode}")
        info = json.loads(line)
        return cls(process, info["issuer"], info["introspection_client_id"],
                   info["introspection_client_secret"])

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def admin(self, path: str, body: dict[str, Any] | None = None) -> Any:
        with httpx.Client(base_url=self.issuer, timeout=10, trust_env=False) as http:
            answer = (http.post(path, json=body or {}) if path != "/admin/log"
                      else http.get(path))
        answer.raise_for_status()
        return answer.json()

    def rotate(self, keep: bool = True) -> str:
        """A new signing key; returns its kid."""
        return str(self.admin("/admin/rotate", {"keep": keep})["kid"])

    def consent(self, answer: str) -> None:
        self.admin("/admin/consent", {"consent": answer})

    def revoke_all(self) -> None:
        self.admin("/admin/revoke")

    def requests(self, endpoint: str | None = None) -> list[dict[str, Any]]:
        """What the authorize and token endpoints were asked, oldest first."""
        seen = self.admin("/admin/log")["requests"]
        return [r for r in seen if endpoint is None or r["endpoint"] == endpoint]

    @property
    def jwks_url(self) -> str:
        return f"{self.issuer}/jwks"

    @property
    def introspection_url(self) -> str:
        return f"{self.issuer}/introspect"

    def register(self, **metadata: Any) -> dict[str, Any]:
        """A client registered through the server's own RFC 7591 endpoint."""
        with httpx.Client(timeout=10, trust_env=False) as http:
            answer = http.post(f"{self.issuer}/register", json=metadata)
        assert answer.status_code == 201, answer.text
        return dict(answer.json())
