"""`mcpkit login URL`, `mcpkit logout URL`, `mcpkit auth status`: signing in to protected MCP
servers from the command line.

`login` runs the OAuth authorization code flow of `mcpkit.transports.oauth.flow` (discovery from
the server's 401, PKCE, `state` and RFC 9207 `iss` checked, the client registered as the
authorization server allows) with a loopback redirect listener on 127.0.0.1
(`mcpkit.transports.oauth.redirect`). It opens the browser, or with `--no-browser` (or no
display) prints the URL to open anywhere; it waits `--timeout` seconds for the browser to come
back. With `--client-credentials` there is no browser: the client id and secret (or its
`--private-key`) obtain the token directly (a machine client). `--scope` asks for more than the
server's challenge names; `--dpop` binds the tokens to a key kept with the sign-in. A new
sign-in is tried apart (`StagedTokenStorage`): the previous one is replaced only once the new
one has succeeded. The tokens go to the token file in the user's data folder, where every other
command finds them (`mcpkit.cli.signins.auth_for`); `logout` revokes them at the authorization
server where it offers revocation (`mcpkit.cli.signout`).

Nothing here prints a token, a code, or a secret: `auth status` shows who issued what, for
which server, with which scopes and until when. Exit status: 0 done, 1 the sign-in failed (the
message says why), 2 a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from mcpkit.cli.usage import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, UsageError

__all__ = [
    "BROWSER_MODE",
    "entries_for",
    "forget",
    "login_args",
    "register",
    "run_auth",
    "sign_in",
]

SECRET_ENV: Final = "MCPKIT_CLIENT_SECRET"
"""Where `--client-secret` is read from when not given: a command line is visible to every user
of the machine (`ps`), the environment is not."""
_AUTH_METHODS: Final = ("client_secret_basic", "client_secret_post", "private_key_jwt", "none")
_APPLICATION_TYPES: Final = ("native", "web")


def register(sub: Any) -> None:
    """Add `login`, `logout` and `auth` to `mcpkit`'s subparsers."""
    login = sub.add_parser(
        "login", help="sign in to a protected MCP server (OAuth)",
        description="Sign in to the MCP server at URL: the browser opens at its authorization "
        "server, and the tokens are kept in the user's data folder for every other mcpkit "
        "command. With --client-credentials, sign in as a machine client instead.",
        epilog="examples: mcpkit login https://mcp.example.com/mcp | mcpkit login URL "
        "--scope 'mcp:read mcp:admin' | mcpkit login URL --no-browser --dpop | "
        "MCPKIT_CLIENT_SECRET=... mcpkit login URL --client-id ID --client-credentials")
    login.set_defaults(auth_command="login")
    login.add_argument("url", metavar="URL", help="the MCP server's http(s) URL")
    login.add_argument("--no-browser", action="store_true",
                       help="print the URL to open instead of opening a browser")
    login.add_argument("--timeout", type=_seconds, default=300.0, metavar="SECONDS",
                       help="how long to wait for the browser to come back (default 300)")
    login.add_argument("--port", type=_port, default=0, metavar="PORT",
                       help="the loopback redirect listener's port (default: a free one; fix "
                       "it for an authorization server that needs the exact redirect URI)")
    login.add_argument("--scope", metavar="SCOPES",
                       help="the scopes to ask for, space-separated, besides those the server "
                       "names (a tool that needs more than basic use; the union is asked)")
    login.add_argument("--client-id", metavar="ID",
                       help="a client registered beforehand at the authorization server")
    login.add_argument("--client-secret", metavar="SECRET",
                       help=f"its secret (better: set {SECRET_ENV}, which `ps` does not show)")
    login.add_argument("--auth-method", choices=_AUTH_METHODS, metavar="METHOD",
                       help="how the client authenticates at the token endpoint "
                       f"({', '.join(_AUTH_METHODS)}; default: the best the server offers)")
    login.add_argument("--client-metadata-url", metavar="URL",
                       help="this client's Client ID Metadata Document URL (an https URL)")
    login.add_argument("--private-key", metavar="FILE",
                       help="the client's private key (PEM or JWK file) for private_key_jwt; "
                       "its path is kept, so later refreshes sign with it too")
    login.add_argument("--application-type", choices=_APPLICATION_TYPES,
                       help="what dynamic client registration says this client is (default: "
                       "native, for the loopback redirect)")
    login.add_argument("--dpop", action="store_true",
                       help="ask for DPoP-bound tokens (RFC 9449): a key is made and kept "
                       "with the sign-in (private, 0600), and every request proves it")
    login.add_argument("--client-credentials", action="store_true",
                       help="sign in as a machine client with the client credentials grant "
                       "(needs --client-id and a secret or --private-key; no browser)")
    login.add_argument("--json", action="store_true", help="print the outcome as JSON")

    logout = sub.add_parser("logout", help="revoke and forget the tokens kept for a server",
                            description="Revoke the tokens kept for the MCP server at URL at "
                            "its authorization server (RFC 7009, where it offers revocation), "
                            "then remove them (and a machine client's credentials).")
    logout.set_defaults(auth_command="logout")
    logout.add_argument("url", metavar="URL")
    logout.add_argument("--keep-grant", action="store_true",
                        help="only forget the tokens here; do not revoke them")

    auth = sub.add_parser("auth", help="the sign-ins kept for protected servers")
    actions = auth.add_subparsers(dest="auth_action", metavar="ACTION", required=True)
    status = actions.add_parser("status", help="list the servers signed in to (no tokens shown)",
                                description="List the servers signed in to: the authorization "
                                "server, scopes, expiry and whether a refresh token is kept. "
                                "Tokens are never shown.")
    status.set_defaults(auth_command="status")
    status.add_argument("--json", action="store_true", help="print JSON for scripts")


def login_args(url: str) -> argparse.Namespace:
    """`mcpkit login URL --no-browser` as parsed, every other option at its default: what a
    sign-in started elsewhere (`mcpkit dev`'s page) runs with."""
    parser = argparse.ArgumentParser(prog="mcpkit")
    register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["login", url, "--no-browser"])


def run_auth(args: argparse.Namespace) -> int:
    from mcpkit.errors import MCPError

    command = args.auth_command
    name = "auth status" if command == "status" else command
    try:
        return asyncio.run(_COMMANDS[command](args))
    except UsageError as exc:
        print(f"mcpkit {name}: {_why(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except (MCPError, OSError) as exc:  # a sign-in or token file's error is one too
        print(f"mcpkit {name}: {_why(exc)}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        return 130


async def _login(args: argparse.Namespace) -> int:
    from mcpkit.cli.signins import CLIENT_CREDENTIALS

    url = _url(args.url)
    secret = args.client_secret or os.environ.get(SECRET_ENV) or None
    if args.client_credentials and not (args.client_id and (secret or args.private_key)):
        raise UsageError(f"--client-credentials needs --client-id and a secret ({SECRET_ENV} "
                         "or --client-secret) or --private-key")
    if secret and not args.client_id:
        raise UsageError("a client secret needs its --client-id")
    if args.client_credentials and (args.client_metadata_url or args.application_type):
        raise UsageError("--client-metadata-url and --application-type are for a browser "
                         "sign-in; a machine client is registered beforehand (--client-id)")
    mode = CLIENT_CREDENTIALS if args.client_credentials else BROWSER_MODE
    return await sign_in(url, args, secret, mode)


BROWSER_MODE: Final = "browser"


async def sign_in(url: str, args: argparse.Namespace, secret: str | None, mode: str,
                  show: Callable[[str], None] | None = None) -> int:
    """Sign in to `url` as `args` say; the previous sign-in is kept until this one succeeds.
    Also what a client command's step-up runs (`mcpkit.cli.step_up`), and `mcpkit dev`'s
    sign-in, whose `show` hands the authorization URL to its page instead of a browser."""
    from mcpkit.cli.signins import CLIENT_CREDENTIALS, SignIn, SignIns, read_key_file
    from mcpkit.errors import AuthError
    from mcpkit.store.tokens import ClientInfo, FileTokenStorage, StagedTokenStorage

    resource = _resource(url)
    private_key = (read_key_file(args.private_key, f"mcpkit login {url}")
                   if args.private_key else None)
    dpop_key = _dpop_key() if args.dpop else None
    storage = FileTokenStorage()
    staged = StagedTokenStorage(storage)
    try:
        if mode == CLIENT_CREDENTIALS:
            await _machine_sign_in(url, args, secret, private_key, dpop_key, staged)
        else:
            await _browser_sign_in(url, args, secret, private_key, dpop_key, staged, show)
    except AuthError as exc:
        if args.client_id and "invalid_client" in str(exc):
            raise AuthError(f"{exc}; check --client-id, its secret, and --auth-method (the way "
                            "the client was registered to authenticate)") from None
        raise
    found = await entries_for(staged, url)
    if not found:
        _say(args, f"{url} did not ask for authorization: it answers without a token, so "
                   "there is nothing to sign in to", {"url": url, "signedIn": False})
        return EXIT_OK
    issuer, stored_resource, tokens = found[0]
    if mode == BROWSER_MODE and args.client_id:  # kept, so later refreshes authenticate the same
        await staged.save_client(issuer, ClientInfo(
            args.client_id, secret, args.auth_method, "pre-registered"))
    signins = SignIns()
    await forget(signins, storage, url, resource)  # the new sign-in replaces the old one
    await staged.commit()
    machine = mode == CLIENT_CREDENTIALS
    signins.put(SignIn(resource, issuer, mode, args.client_id if machine else None,
                       secret if machine else None, args.auth_method if machine else None,
                       args.scope, str(Path(args.private_key).expanduser().resolve())
                       if args.private_key else None,
                       dpop_key.private_jwk() if dpop_key is not None else None))
    summary = _summary(issuer, stored_resource, tokens)
    _say(args, f"Signed in to {url} at {issuer} ({'; '.join(_details(summary))})",
         {"url": url, "signedIn": True, **summary})
    return EXIT_OK


def _dpop_key() -> Any:
    from mcpkit.auth.dpop import DPoPKey

    return DPoPKey.generate()


def _resource(url: str) -> str:
    from mcpkit.auth.client_discovery import canonical_resource

    return canonical_resource(url)


async def _browser_sign_in(url: str, args: argparse.Namespace, secret: str | None,
                           private_key: str | None, dpop_key: Any, storage: Any,
                           given: Callable[[str], None] | None = None) -> None:
    from mcpkit.transports.oauth.dpop import DPoPSigner
    from mcpkit.transports.oauth.flow import OAuth
    from mcpkit.transports.oauth.redirect import RedirectListener, open_in_browser

    def show(url: str) -> None:
        if given is not None:
            given(url)
            return
        from mcpkit.cli.terminal import shown_text

        open_in_browser(url, lambda line: print(shown_text(line), file=sys.stderr, flush=True),
                        browser=not args.no_browser)

    async with RedirectListener(timeout=args.timeout, port=args.port) as listener:
        oauth = OAuth(redirect_uri=listener.redirect_uri, redirect_handler=show,
                      callback_handler=listener.callback_handler, client_id=args.client_id,
                      client_secret=secret, token_endpoint_auth_method=args.auth_method,
                      client_metadata_url=args.client_metadata_url, client_name="mcpkit CLI",
                      application_type=args.application_type, private_key=private_key,
                      scope=args.scope, storage=storage,
                      dpop=DPoPSigner(dpop_key) if dpop_key is not None else None)
        await _reach(url, oauth)


async def _machine_sign_in(url: str, args: argparse.Namespace, secret: str | None,
                           private_key: str | None, dpop_key: Any, storage: Any) -> None:
    from mcpkit.transports.oauth.dpop import DPoPSigner
    from mcpkit.transports.oauth.grants import ClientCredentials, ClientCredentialsGrant
    from mcpkit.transports.oauth.machine import MachineAuth

    grant = ClientCredentialsGrant(ClientCredentials(args.client_id, secret, private_key,
                                                     auth_method=args.auth_method))
    auth = MachineAuth(grant, scope=args.scope, storage=storage,
                       dpop=DPoPSigner(dpop_key) if dpop_key is not None else False)
    try:
        await _reach(url, auth)
    finally:
        await auth.aclose()


async def _reach(url: str, auth: Any) -> None:
    """One MCP request to `url`, so the server's 401 starts the flow `auth` drives."""
    from mcpkit._version import __version__
    from mcpkit.client import Client, ClientOptions
    from mcpkit.transports.http_client.transport import HTTPConnector

    client = Client(HTTPConnector(url, auth=auth),
                    client_info={"name": "mcpkit-cli", "version": __version__},
                    options=ClientOptions(timeout=60.0))
    async with client:
        await client.discover()


async def _logout(args: argparse.Namespace) -> int:
    from mcpkit.cli.signout import sign_out

    return await sign_out(_url(args.url), keep_grant=args.keep_grant)


async def forget(signins: Any, storage: Any, url: str, resource: str) -> set[str]:
    """Remove what is kept for the server at `url`; the issuers whose tokens went."""
    signins.remove(resource)
    gone = set()
    for issuer, stored, _ in await entries_for(storage, url):
        await storage.delete(issuer, stored)
        gone.add(issuer)
    return gone


async def _status(args: argparse.Namespace) -> int:
    from mcpkit.cli.signins import SignIns
    from mcpkit.cli.terminal import json_text, shown
    from mcpkit.store.tokens import FileTokenStorage

    storage = FileTokenStorage()
    signins = SignIns().all()
    rows = []
    for issuer, resource, tokens in await storage.entries():
        signin = signins.get(resource)
        rows.append({**_summary(issuer, resource, tokens),
                     "mode": signin.mode if signin is not None else "browser"})
    if args.json:
        print(json_text({"tokenFile": str(storage.path), "signins": rows}))
        return EXIT_OK
    if not rows:
        print(f"not signed in to any server (tokens are kept in {storage.path})")
        return EXIT_OK
    for row in rows:
        print(shown(row["resource"]))
        for line in [f"issuer: {row['issuer']} ({row['mode']})", *_details(row)]:
            print(f"  {shown(line)}")
    return EXIT_OK


def _summary(issuer: str, resource: str, tokens: Any) -> dict[str, Any]:
    """What may be shown of a token set: never the tokens."""
    now = time.time()
    expires_at = tokens.expires_at
    return {"resource": resource, "issuer": issuer, "scope": tokens.scope,
            "expiresAt": expires_at,
            "expired": expires_at is not None and expires_at <= now,
            "refreshToken": tokens.refresh_token is not None}


def _details(summary: dict[str, Any]) -> list[str]:
    """The scopes, the expiry and the refresh token of a summary, in words."""
    parts = [f"scopes: {summary['scope'] or 'none named'}"]
    expires_at = summary["expiresAt"]
    if expires_at is None:
        parts.append("expiry not given")
    else:
        left = expires_at - time.time()
        parts.append("expired" if left <= 0 else f"expires in {_duration(left)}")
    parts.append("refresh token kept" if summary["refreshToken"] else "no refresh token")
    return parts


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


async def entries_for(storage: Any, url: str) -> list[tuple[str, str, Any]]:
    """The stored (issuer, resource, tokens) that are for the server at `url`."""
    from mcpkit.auth.client_discovery import canonical_resource, resource_matches

    resource = canonical_resource(url)
    return [(i, r, t) for i, r, t in await storage.entries()
            if r == resource or resource_matches(url, r)]


def _say(args: argparse.Namespace, line: str, data: dict[str, Any]) -> None:
    from mcpkit.cli.terminal import json_text, shown

    # A sign-in a client command started says so on stderr: its stdout is the command's.
    print(json_text(data) if args.json else shown(line),
          file=sys.stderr if getattr(args, "summary_to_stderr", False) else sys.stdout)


def _url(text: str) -> str:
    url = text.strip()
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"{text!r} is not an http(s) URL; sign-in is for HTTP servers (a "
                         "stdio server takes its credentials from its environment)")
    return url


def _why(exc: BaseException) -> str:
    from mcpkit.cli.terminal import shown_block

    return shown_block(str(exc) or type(exc).__name__)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < 86400:
        raise argparse.ArgumentTypeError(f"expected seconds above zero, e.g. 300, not {text!r}")
    return value


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port 0-65535, not {text!r}")
    return int(text)


_COMMANDS = {"login": _login, "logout": _logout, "status": _status}
