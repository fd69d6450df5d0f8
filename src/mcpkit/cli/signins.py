"""What `mcpkit login` remembers about each server besides its tokens, and the authorization
every other client command sends with its requests.

The tokens themselves are in the token file of `mcpkit.store.tokens` (keyed by issuer and
resource, refreshed by the OAuth flow). This file, `signins.json` beside it in the user's data
folder, says per server how it was signed in to: through the browser (the OAuth flow then
refreshes on its own), or with the client credentials grant, whose client id and secret are
kept here so that a later command can obtain a new token when the old one expires. A sign-in
with `--dpop` keeps its DPoP key here too (its private JWK): tokens are bound to that key, so a
refresh in a later command must prove it again; one with `--private-key` keeps the key file's
path (the key stays where its owner keeps it). It is
written as the token file is: private (0600), whole, renamed over the old one; one that others
may read or that does not parse is refused with the fix, never overwritten.

`auth_for(url)` is what `mcpkit tools|call|...` hand to the HTTP transport: the stored
tokens, refreshed when they expire, and never a browser (a server that needs a new sign-in
ends the command with the `mcpkit login URL` to run).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from mcpkit.errors import SignInFileError
from mcpkit.store.private_json import read_private_json, write_private_json

__all__ = [
    "BROWSER",
    "CLIENT_CREDENTIALS",
    "SignIn",
    "SignInFileError",
    "SignIns",
    "auth_for",
]

BROWSER: Final = "browser"
CLIENT_CREDENTIALS: Final = "client-credentials"
FILE_NAME: Final = "signins.json"


@dataclass(frozen=True)
class SignIn:
    """One server's sign-in: `resource` is its canonical URL, `issuer` the authorization
    server that issued its tokens."""

    resource: str
    issuer: str | None
    mode: str = BROWSER
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    auth_method: str | None = None
    scope: str | None = None
    private_key: str | None = None
    """The path of the client's private key file (private_key_jwt)."""
    dpop_key: dict[str, Any] | None = field(default=None, repr=False)
    """The private JWK of the DPoP key the tokens are bound to."""

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def dpop_signer(self) -> Any:
        """The `DPoPSigner` of the kept DPoP key, or None for bearer tokens."""
        if self.dpop_key is None:
            return None
        from mcpkit.auth.dpop import DPoPKey
        from mcpkit.transports.oauth.dpop import DPoPSigner

        try:
            return DPoPSigner(DPoPKey.from_jwk(self.dpop_key))
        except (ValueError, TypeError) as exc:
            raise SignInFileError(f"the DPoP key kept for {self.resource} cannot be used ({exc}); "
                                  f"sign in again: mcpkit login {self.resource} --dpop") from None

    def private_key_text(self) -> str | None:
        """The private key file's text, or None when the sign-in names none."""
        if self.private_key is None:
            return None
        return read_key_file(self.private_key, f"mcpkit login {self.resource}")


class SignIns:
    """The sign-in file, read afresh on every call (another command may have changed it)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        if path is None:
            from mcpkit.store.state_keys import data_dir

            path = data_dir() / FILE_NAME
        self.path = Path(path)

    def get(self, resource: str) -> SignIn | None:
        return self.all().get(resource)

    def put(self, signin: SignIn) -> None:
        entries = self._read()
        entries[signin.resource] = signin.to_json()
        self._write(entries)

    def remove(self, resource: str) -> SignIn | None:
        entries = self._read()
        found = entries.pop(resource, None)
        if found is not None:
            self._write(entries)
        return None if found is None else self._parse(resource, found)

    def all(self) -> dict[str, SignIn]:
        return {resource: self._parse(resource, entry)
                for resource, entry in sorted(self._read().items())}

    def _parse(self, resource: str, entry: Any) -> SignIn:
        try:
            return SignIn(**{**entry, "resource": resource})
        except TypeError:
            raise SignInFileError(f"{self.path}: the entry for {resource} is malformed; remove "
                                  f"it with `mcpkit logout {resource}`") from None

    def _read(self) -> dict[str, Any]:
        data = read_private_json(self.path, SignInFileError, "sign-in file")
        if data is None:
            return {}
        if not isinstance(data, dict) or not isinstance(data.get("signins"), dict):
            raise SignInFileError(f"{self.path}: not an mcpkit sign-in file; remove it and "
                                  "sign in again")
        return dict(data["signins"])

    def _write(self, entries: dict[str, Any]) -> None:
        write_private_json(self.path, {"version": 1, "signins": entries})


def read_key_file(path: str, again: str) -> str:
    """A private key file's text (PEM or JWK); `SignInFileError` naming it and `again` (the
    command that fixes it) when it cannot be read."""
    try:
        return Path(path).expanduser().read_text()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise SignInFileError(f"the private key file {path} cannot be read ({why}); restore it, "
                              f"or sign in again: {again} --private-key FILE") from None


def auth_for(url: str) -> Any:
    """The authorization the client commands send to the server at `url`: its client
    credentials grant if it was signed in to that way, else the OAuth flow over the stored
    tokens (which sends nothing to a server that asks for nothing)."""
    from mcpkit.auth.client_discovery import canonical_resource
    from mcpkit.store.tokens import FileTokenStorage

    storage = FileTokenStorage()
    signin = SignIns().get(canonical_resource(url))
    if signin is not None and signin.mode == CLIENT_CREDENTIALS and signin.client_id:
        from mcpkit.transports.oauth.grants import ClientCredentials, ClientCredentialsGrant
        from mcpkit.transports.oauth.machine import MachineAuth

        grant = ClientCredentialsGrant(ClientCredentials(
            signin.client_id, signin.client_secret, signin.private_key_text(),
            auth_method=signin.auth_method))
        return MachineAuth(grant, scope=signin.scope, storage=storage,
                           dpop=signin.dpop_signer() or False)
    from mcpkit.transports.oauth.flow import OAuth

    if signin is None:
        return OAuth(storage=storage)
    return OAuth(storage=storage, private_key=signin.private_key_text(),
                 dpop=signin.dpop_signer())
