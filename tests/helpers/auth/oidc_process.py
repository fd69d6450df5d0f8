"""node-oidc-provider (npm `oidc-provider`, pinned here) as the tests' second authorization
server: installed into .cache/oidc-provider (by scripts/test, or by the first test that needs
it), started on 127.0.0.1 by a fixture with the configuration of `oidc_provider.mjs`, stopped
after. `python tests/helpers/auth/oidc_process.py --install` installs it and nothing else.

Its login and consent pages are its own; `form_login.sign_in_at` walks them as a user would,
and the browser test drives real Chromium through them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
VERSION = "9.13.3"
PACKAGE = f"oidc-provider@{VERSION}"
CACHE = ROOT / ".cache" / "oidc-provider"
SCRIPT = HERE / "oidc_provider.mjs"
__all__ = ["OIDCProvider", "install", "installed_version"]


def installed_version() -> str | None:
    try:
        found = json.loads((CACHE / "node_modules" / "oidc-provider" / "package.json").read_text())
    except (OSError, ValueError):
        return None
    return str(found.get("version"))


def install() -> None:
    """The pinned package in .cache/oidc-provider (npm, once); AssertionError saying what is
    missing when it cannot be had."""
    if installed_version() == VERSION:
        return
    npm = shutil.which("npm")
    assert npm is not None and shutil.which("node") is not None, (
        "node-oidc-provider needs Node.js and npm on PATH (scripts/test installs the package)")
    CACHE.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund",
                           "--loglevel=error", PACKAGE], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0 and installed_version() == VERSION, (
        f"npm install {PACKAGE} failed: {done.stderr[-2000:]}")


@dataclass
class OIDCProvider:
    """One running node-oidc-provider and its issuer URL."""

    process: subprocess.Popen[str]
    issuer: str

    @classmethod
    def start(cls, *, ttl: int = 600, dpop_nonce: bool = False,
              ca_file: Path | None = None,
              upstream_client: dict[str, Any] | None = None) -> OIDCProvider:
        """`upstream_client` ({client_id, client_secret, redirect_uris}) makes it an upstream
        identity provider with no registration and that one confidential client."""
        from helpers.auth.as_process import started

        install()
        # Node resolves the package from the script's folder: a copy of the script lives
        # beside the installed modules (written whole, then renamed: a start never reads half).
        script = CACHE / SCRIPT.name
        partial = script.with_suffix(f".{os.getpid()}.tmp")
        shutil.copyfile(SCRIPT, partial)
        partial.replace(script)
        env = {"OIDC_TTL": str(ttl), "OIDC_DPOP_NONCE": "1" if dpop_nonce else "0",
               "NODE_OPTIONS": "--no-warnings"}
        if ca_file is not None:
            env["NODE_EXTRA_CA_CERTS"] = str(ca_file)
        if upstream_client is not None:
            env["OIDC_UPSTREAM"] = json.dumps(upstream_client)
        process, line = started(["node", str(script)], env=env, cwd=CACHE)
        return cls(process, json.loads(line)["issuer"])

    def stop(self) -> None:
        from helpers.auth.as_process import stopped

        stopped(self.process)

    @classmethod
    def serving(cls, **options: Any) -> Iterator[OIDCProvider]:
        """A fixture's body: the provider while the tests run."""
        provider = cls.start(**options)
        try:
            yield provider
        finally:
            provider.stop()

    def register(self, **metadata: Any) -> dict[str, Any]:
        """A client registered through the provider's own RFC 7591 endpoint."""
        with httpx.Client(timeout=10, trust_env=False) as http:
            answer = http.post(f"{self.issuer}/reg", json=metadata)
        assert answer.status_code == 201, answer.text
        return dict(answer.json())

    def opaque(self, resource: str) -> None:
        """Tokens for `resource` are opaque from now on (checked by introspection)."""
        with httpx.Client(timeout=10, trust_env=False) as http:
            http.post(f"{self.issuer}/test/opaque", json={"resource": resource}
                      ).raise_for_status()

    def introspector(self) -> tuple[str, str]:
        """A confidential client a resource server introspects tokens as."""
        client = self.register(grant_types=[], response_types=[], redirect_uris=[],
                               token_endpoint_auth_method="client_secret_basic")
        return client["client_id"], client["client_secret"]


if __name__ == "__main__" and sys.argv[1:] == ["--install"]:
    install()
    print(f"node-oidc-provider {installed_version()} in {CACHE}")
