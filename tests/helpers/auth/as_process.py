"""The real authorization server (`authorization_server.py`, authlib) as a process, and the
admin calls the tests make on it."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from helpers.wire import spec_available

HERE = Path(__file__).resolve().parent
AS_SCRIPT = HERE / "authorization_server.py"
__all__ = ["AuthServer", "ProtectedServer", "started", "stopped"]

START_BOUND = 30.0
"""The longest the server may take to print its address (a busy machine, RSA key made)."""


def started(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
            ) -> tuple[subprocess.Popen[str], str]:
    """A test server process, and the line it printed once it accepts connections."""
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, cwd=cwd,
                               env={**os.environ, "NO_PROXY": "127.0.0.1", **(env or {})})
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], START_BOUND)
    line = process.stdout.readline() if ready else ""
    if not line:
        stopped(process)
        raise AssertionError(f"{argv[1]} did not start (exit status {process.returncode})")
    return process, line.strip()


def stopped(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@dataclass
class ProtectedServer:
    """A protected mcpkit server process (`protected_server.py`) trusting one `AuthServer`."""

    process: subprocess.Popen[str]
    url: str

    @classmethod
    def start(cls, auth: Any, verifier: str = "jwt", *, introspector: tuple[str, str] = ("", ""),
              dpop_nonce: bool = False) -> ProtectedServer:
        """Trusting `auth` (an `AuthServer`, or an `OIDCProvider` with the `introspector`
        client it introspects as)."""
        if verifier == "introspection" and isinstance(auth, AuthServer):
            introspector = (auth.introspection_client_id, auth.introspection_client_secret)
        extra = list(introspector) if verifier == "introspection" else []
        process, url = started([sys.executable, str(HERE / "protected_server.py"), auth.issuer,
                                verifier, *extra],
                               env={"PROTECTED_DPOP_NONCE": "1" if dpop_nonce else "0"})
        return cls(process, url)

    def stop(self) -> None:
        stopped(self.process)

    @classmethod
    def serving(cls, auth: Any, verifier: str, **options: Any) -> Iterator[ProtectedServer]:
        """A module fixture's body: the server while the tests run, then, once stopped, every
        client message it saw on the schema (and some seen, where the schemas are found)."""
        server = cls.start(auth, verifier, **options)
        yield server
        report = server.schema_report()
        server.stop()
        assert report["problems"] == [], report
        assert report["checked"] > 0 or not spec_available(), "no message was schema-checked"

    def schema_report(self) -> dict[str, Any]:
        """How many client messages were checked against the schema, and what failed."""
        base = self.url.removesuffix("/mcp")
        with httpx.Client(timeout=10, trust_env=False) as http:
            return dict(http.get(f"{base}/test/problems").json())


@dataclass
class AuthServer:
    """One running authorization server process and what it printed when it started."""

    process: subprocess.Popen[str]
    issuer: str
    introspection_client_id: str
    introspection_client_secret: str

    @classmethod
    def start(cls, *flags: str) -> AuthServer:
        process, line = started([sys.executable, str(AS_SCRIPT), *flags])
        info = json.loads(line)
        return cls(process, info["issuer"], info["introspection_client_id"],
                   info["introspection_client_secret"])

    def stop(self) -> None:
        stopped(self.process)

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
