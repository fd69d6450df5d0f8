"""The settings of `mcpkit run`: one table, `SETTINGS`, from which the command's flags, their
`MCPKIT_*` environment variables and the table in docs/settings.md are all made.

A `Setting` is a run option (`--http`, `--store`, `--session-idle`, read from `args` by the
command) or a `ServerOptions` field (`page_size`, `tasks.lease_s`, set on the loaded server's
options); it has a `Kind` (`mcpkit.cli.setting_kinds`) that reads it from text and writes it
back as text, the same for a flag's value, an environment variable and a line of an env file,
so each is checked and refused the same way. Every setting has an environment variable,
`MCPKIT_` and its name in capitals (`tasks.lease_s` is `MCPKIT_TASKS_LEASE_S`). A run option
also has its flag. A `ServerOptions` field has none unless the table gives one: the flags stay
the few a person types, and what an operator sets once lives in the environment or an env
file.

Adding an option is adding one `Setting` here: the parser (`add_flags`), the environment
variable, `--show-config` and docs/settings.md (`mcpkit.cli.settings_doc`, written by
`scripts/settings-doc`; `tests/cli/test_settings.py` fails when the file is stale) follow.
`ServerOptions` fields that cannot come from text (a clock, a store object) are listed in
`CODE_ONLY` with why, and the test fails on a field that is in neither.

A dotted name whose head is no `ServerOptions` field names an extension's options in
`ServerOptions.extensions` (`tasks.lease_s` is `TaskOptions.lease_s`): `option_at` reads it,
the modules of `EXTENSION_OPTIONS` registering those types.

Imports the standard library and `mcpkit.cli.setting_kinds`; the options of the server and of
its extensions when they are looked up.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.cli.setting_kinds import (
    ADDRESS,
    API_HEADERS,
    CACHE,
    COUNT,
    GRACE,
    KEYS,
    NAMES,
    SECONDS,
    SECRET,
    STORE,
    SWITCH,
    TASK_STORE,
    TEXT,
    Kind,
)

__all__ = [
    "CODE_ONLY",
    "EXTENSION_OPTIONS",
    "SETTINGS",
    "Setting",
    "add_flags",
    "by_name",
    "extension_kind",
    "option_at",
]
"""The kinds of value (`Kind`, `SWITCH`, ...) are `mcpkit.cli.setting_kinds`'; the page made
from the table, `settings_markdown`, is `mcpkit.cli.settings_doc`'."""


@dataclass(frozen=True)
class Setting:
    """One option of `mcpkit run`: its flag (or none), its variable, its kind and its help."""

    name: str
    """The run option's `args` attribute, or the `ServerOptions` field (`tasks.lease_s`)."""
    kind: Kind
    help: str
    server_option: bool = False
    """Sets a `ServerOptions` field (else `mcpkit run` reads it itself)."""
    flag: str | None = None
    """The command-line flag; None: environment and env file only."""
    default: Any = None
    """A run option's default (a `ServerOptions` field's is the dataclass's)."""
    const: Any = None
    """What the flag means given without a value (`--http` alone)."""
    repeatable: bool = False
    """The flag may be given many times, its values gathered (`--allow-host`)."""
    group: str | None = None
    """Settings of one group exclude each other (`--stdio` and `--http`)."""
    also_sets: str | None = None
    """The `ServerOptions` field a run option changes on its way (`--store`: `store`)."""
    metavar: str | None = None
    """What the value is called in help, when the kind's word says too little."""

    @property
    def shown_as(self) -> str:
        return self.metavar or self.kind.metavar

    @property
    def env(self) -> str:
        return "MCPKIT_" + self.name.replace(".", "_").upper()

    @property
    def dest(self) -> str:
        return self.name.replace(".", "_")


def _run(name: str, kind: Kind, help: str, **more: Any) -> Setting:
    return Setting(name, kind, help, flag="--" + name.replace("_", "-"), **more)


def _server(name: str, kind: Kind, help: str, **more: Any) -> Setting:
    return Setting(name, kind, help, server_option=True, **more)


SETTINGS: Final[tuple[Setting, ...]] = (
    _run("stdio", SWITCH, "serve on stdin/stdout (the default)", group="mode"),
    _run("http", ADDRESS, "serve Streamable HTTP (both eras) with uvicorn; default "
         "127.0.0.1:8000/mcp", const="127.0.0.1:8000/mcp", group="mode"),
    _run("allow_host", NAMES, "also accept this Host header (repeatable; name[:port], *.domain "
         "or *), e.g. the public name behind a reverse proxy", repeatable=True, default=(),
         metavar="HOST"),
    _run("allow_origin", NAMES, "also accept this browser Origin (repeatable; "
         "https://app.example.com or *)", repeatable=True, default=(), metavar="ORIGIN"),
    _run("dev", SWITCH, "development: an uncaught exception's type and message reach the client, "
         "and debug logging goes to stderr (the address is unchanged: 127.0.0.1 unless given)",
         default=False, also_sets="expose_errors"),
    _run("store", STORE, "where state is kept (default: single use in the user's data folder, "
         "the rest in memory; memory keeps single use in this process too): sqlite:///PATH shares "
         "single-use retries on this host; postgresql://... or redis://... shares every seam "
         "(retries, legacy sessions, state keys, tasks) between replicas", also_sets="store"),
    _run("session_idle", SECONDS, "with --http: end a 2025-11-25 session after this long "
         "without a request (default 3600)"),
    _run("workers", COUNT, "with --http: serve with N uvicorn worker processes sharing the "
         "store, which must be PostgreSQL or Redis"),
    _run("reload", SWITCH, "with --http: restart when a .py file beside the target changes "
         "(development)", default=False),
    _run("skills", TEXT, "also serve the skills in DIR (folders holding a SKILL.md) through "
         "the Skills extension; alone, a server of just those skills", metavar="DIR"),
    _run("auth_issuer", TEXT, "with --http: accept only OAuth access tokens from this "
         "authorization server (its issuer URL); JWTs are checked against its published keys",
         metavar="URL"),
    _run("auth_audience", TEXT, "what tokens must name in aud (default: the served URL)",
         metavar="URI"),
    _run("auth_scopes", TEXT, "the scopes basic use needs, space-separated, published and "
         "asked for in a 401", metavar="SCOPES"),
    _run("auth_introspection", TEXT, "check opaque tokens at this RFC 7662 endpoint instead of "
         "as JWTs; needs --auth-client-id and MCPKIT_AUTH_CLIENT_SECRET", metavar="URL"),
    _run("auth_client_id", TEXT, "this server's client id at the introspection endpoint",
         metavar="ID"),
    Setting("auth_client_secret", SECRET, "the secret of --auth-client-id (never a flag: a "
            "command line is shown by ps)"),
    _run("auth_public_url", TEXT, "the URL clients reach this server by: its resource "
         "identifier and the default audience; needed when bound off loopback, where the Host "
         "header is never taken for it", metavar="URL"),
    _run("auth_upstream", TEXT, "with --http: users sign in at this identity provider through "
         "an authorization proxy of the server's own: github, google, entra:TENANT, "
         "auth0:DOMAIN, okta:DOMAIN/oauth2/SERVER, keycloak:REALM_URL, or an OpenID provider's "
         "URL", metavar="PROVIDER"),
    _run("auth_upstream_client_id", TEXT, "the proxy's client at the provider, made in its "
         "console (its redirect URI: the public URL's origin + /oauth/callback)", metavar="ID"),
    Setting("auth_upstream_client_secret", SECRET, "the secret of --auth-upstream-client-id "
            "(never a flag: a command line is shown by ps)"),
    _run("auth_upstream_scopes", TEXT, "what the proxy asks the provider for, space-separated "
         "(default: the provider's usual ones)", metavar="SCOPES"),
    _run("auth_token_lifetime", SECONDS, "with --auth-upstream: how long the proxy's access "
         "tokens live (default 3600)"),
    _run("openapi", TEXT, "serve the operations of this OpenAPI 3.0/3.1 document (a path or an "
         "http(s) URL, JSON or YAML) as tools; alone, or added to FILE's server",
         metavar="SPEC"),
    _run("base_url", TEXT, "with --openapi: where the API's requests go (default: the "
         "document's first server)", metavar="URL"),
    _run("api_header", API_HEADERS, "with --openapi: send this header with every request "
         "(repeatable; one per line in the variable); a VALUE of $VAR or ${VAR} is read from "
         "that environment variable, keeping secrets off the command line", repeatable=True,
         default=()),
    _server("page_size", COUNT, "items per page of every list result"),
    _server("list_cache", CACHE, "caching hint of list results and server/discover"),
    _server("read_cache", CACHE, "default caching hint of resources/read (a resource may "
            "override it)"),
    _server("logging", SWITCH, "advertise logging, so handlers may send log messages to clients "
            "that ask for them"),
    _server("max_message_bytes", COUNT, "largest message a transport accepts"),
    _server("state_keys", KEYS, "keys sealing requestState and handles (base64, the first seals, "
            "all open); empty: the key ring in the user's data folder"),
    _server("state_ttl", SECONDS, "seconds a sealed requestState stays valid"),
    _server("expose_errors", SWITCH, "put an unexpected exception's type and message in what the "
            "client sees (--dev sets it)"),
    _server("scoped_lists", SWITCH, "leave out of the lists what the caller's token does not "
            "grant the scopes= of"),
    _server("grace_s", GRACE, "on SIGTERM, let running requests and tasks finish this long: "
            "resumable tasks are handed back at once, requests still running then are answered "
            "503 with Retry-After, tasks still running end failed, saying why", flag="--grace"),
    _server("max_call_depth", COUNT, "how deep a handler's own calls (ctx.call_tool, "
            "read_resource, get_prompt) may nest before the innermost fails with -32603"),
    _server("tasks.store", TASK_STORE, "where tasks are kept: a path to an SQLite file or a "
            "store URL (sqlite:///path, memory, postgresql://..., redis://...; default: "
            "tasks.sqlite3 in the user's data folder)"),
    _server("tasks.sync_budget_s", SECONDS, "how long an optional task tool may run before the "
            "call becomes a task"),
    _server("tasks.ttl_ms", COUNT, "how long a task is kept after it is created, in ms"),
    _server("tasks.poll_interval_ms", COUNT, "the pollIntervalMs suggested to clients"),
    _server("tasks.max_running", COUNT, "tasks this process runs at once, whoever asked (a "
            "call past it is answered 503 with Retry-After)"),
    _server("tasks.max_active_per_principal", COUNT, "unfinished tasks one caller may have at "
            "once, across replicas (one more: -32602, HTTP 429 with Retry-After)"),
    _server("tasks.max_stored_per_principal", COUNT, "tasks kept for one caller, finished ones "
            "until their TTL"),
    _server("tasks.max_stored_bytes_per_principal", COUNT, "bytes the stored tasks of one "
            "caller take"),
    _server("tasks.input_wait_s", SECONDS, "how long a task waits for an answer before it is "
            "cancelled, saying so"),
    _server("tasks.max_result_bytes", COUNT, "largest stored task result (its JSON)"),
    _server("tasks.heartbeat_s", SECONDS, "how often running tasks' leases are renewed"),
    _server("tasks.lease_s", SECONDS, "how long a heartbeat vouches for a running task"),
    _server("tasks.max_attempts", COUNT, "times a resumable task is started at most after "
            "crashes (a hand-back by a stopping server does not count)"),
)

CODE_ONLY: Final[dict[str, str]] = {
    "clock": "a function (the time source of state expiry), set in code for tests",
}
"""`ServerOptions` fields no text can give, and why (docs/settings.md lists them)."""


EXTENSION_OPTIONS: Final = ("mcpkit.ext.tasks.options",)
"""The modules that register the options types of the extensions whose fields are settings
(`mcpkit.server.extension_options.register_options`)."""


def extension_kind(name: str) -> type[Any] | None:
    """The options type of the extension named `name` in `ServerOptions.extensions`, or None."""
    from importlib import import_module

    from mcpkit.server.extension_options import options_kind

    for module in EXTENSION_OPTIONS:
        import_module(module)
    return options_kind(name)


def option_at(options: Any, part: str) -> Any:
    """The field `part` of an options object; of a `ServerOptions`, also the options of the
    extension registered as `part` (its defaults when none were given). AttributeError for
    neither."""
    if part in getattr(type(options), "__dataclass_fields__", {}):
        return getattr(options, part)
    kind = extension_kind(part) if hasattr(options, "extensions") else None
    if kind is None:
        raise AttributeError(f"{type(options).__name__} has no {part}")
    return options.extension(part, kind)


def by_name() -> dict[str, Setting]:
    return {s.name: s for s in SETTINGS}


def add_flags(parser: argparse.ArgumentParser, settings: Iterable[Setting] = SETTINGS) -> None:
    """The flags of `settings`, each read as text (its kind reads it, after the environment
    and the env file are weighed in) and None when not given."""
    groups: dict[str, Any] = {}
    for s in settings:
        if s.flag is None:
            continue
        target: Any = parser
        if s.group is not None:
            if s.group not in groups:
                groups[s.group] = parser.add_mutually_exclusive_group()
            target = groups[s.group]
        help_text = f"{s.help} [{s.env}]"
        if s.kind is SWITCH:
            target.add_argument(s.flag, dest=s.dest, action="store_const", const="true",
                                default=None, help=help_text)
        elif s.repeatable:
            target.add_argument(s.flag, dest=s.dest, action="append", default=None,
                                metavar=s.shown_as, help=help_text)
        elif s.const is not None:
            target.add_argument(s.flag, dest=s.dest, nargs="?", const=s.kind.text(s.const),
                                default=None, metavar=s.shown_as, help=help_text)
        else:
            target.add_argument(s.flag, dest=s.dest, default=None, metavar=s.shown_as,
                                help=help_text)
