"""The settings of `mcpkit run`: one table, `SETTINGS`, from which the command's flags, their
`MCPKIT_*` environment variables and the table in docs/settings.md are all made.

A `Setting` is a run option (`--http`, `--store`, `--session-idle`, read from `args` by the
command) or a `ServerOptions` field (`page_size`, `tasks.lease_s`, set on the loaded server's
options); it has a `Kind` that reads it from text and writes it back as text, the same for a
flag's value, an environment variable and a line of an env file, so each is checked and
refused the same way. Every setting has an environment variable, `MCPKIT_` and its name in
capitals (`tasks.lease_s` is `MCPKIT_TASKS_LEASE_S`). A run option also has its flag. A
`ServerOptions` field has none unless the table gives one: the flags stay the few a person
types, and what an operator sets once lives in the environment or an env file.

Adding an option is adding one `Setting` here: the parser (`add_flags`), the environment
variable, `--show-config` and docs/settings.md (`settings_markdown`, written by
`scripts/settings-doc`; `tests/cli/test_settings.py` fails when the file is stale) follow.
`ServerOptions` fields that cannot come from text (a clock, a store object) are listed in
`CODE_ONLY` with why, and the test fails on a field that is in neither.

A dotted name whose head is no `ServerOptions` field names an extension's options in
`ServerOptions.extensions` (`tasks.lease_s` is `TaskOptions.lease_s`): `option_at` reads it,
the modules of `EXTENSION_OPTIONS` registering those types.

Imports the standard library, `mcpkit.cli.usage`, and for checking values the store URL
forms (`mcpkit.store.urls`) and the HTTP address parser, when a value is read.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "CODE_ONLY",
    "EXTENSION_OPTIONS",
    "FALSE_WORDS",
    "SETTINGS",
    "SWITCH",
    "TRUE_WORDS",
    "Kind",
    "Setting",
    "add_flags",
    "by_name",
    "extension_kind",
    "option_at",
    "settings_markdown",
]

TRUE_WORDS: Final = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS: Final = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class Kind:
    """How a setting's value is read from text and written as text."""

    read: Callable[[str], Any]
    """Text to value; raises `ValueError` saying what was expected."""
    text: Callable[[Any], str] = str
    metavar: str = "VALUE"
    secret: bool = False
    """Shown as hidden by `--show-config`."""


def _switch(text: str) -> bool:
    value = text.strip().lower()
    if value in TRUE_WORDS:
        return True
    if value in FALSE_WORDS:
        return False
    raise ValueError(f"expected 1, true, yes or on (or 0, false, no, off), not {text!r}")


def _count(text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"expected a whole number above zero, not {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0 or math.isinf(value):
        raise ValueError(f"expected seconds above zero, e.g. 600, not {text!r}")
    return value


def _grace(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value >= 0 or math.isinf(value):
        raise ValueError(f"expected seconds, 0 or more, e.g. 30, not {text!r}")
    return value


def _names(text: str) -> tuple[str, ...]:
    return tuple(part for part in text.replace(",", " ").split() if part)


def _cache(text: str) -> Any:
    from mcpkit.server.resources import CacheHint

    ttl, _, scope = text.replace(" ", "").partition(",")
    try:
        return CacheHint(int(ttl), scope or "public")
    except ValueError:
        raise ValueError(f"expected TTL_MS[,public|private], e.g. 60000,public, not {text!r}"
                         ) from None


def _store(text: str, *, paths: bool = False) -> str:
    from mcpkit.store.urls import StoreURLError, parse_store_url

    try:
        parse_store_url(text, paths=paths)
    except StoreURLError as exc:
        raise ValueError(exc.reason) from None
    return text.strip()


def _task_store(text: str) -> str:
    return _store(text, paths=True)


def _address(text: str) -> str:
    from mcpkit.transports.http_server.running import parse_address

    parse_address(text)  # raises ValueError naming the form
    return text.strip()


def _hidden_url(value: Any) -> str:
    """A store URL with its password left out."""
    from urllib.parse import urlsplit

    text = str(value)
    parts = urlsplit(text)
    if parts.password:
        return text.replace(f":{parts.password}@", ":***@", 1)
    return text


SWITCH: Final = Kind(_switch, lambda v: "true" if v else "false", "BOOL")
COUNT: Final = Kind(_count, str, "N")
SECONDS: Final = Kind(_seconds, lambda v: f"{v:g}", "SECONDS")
GRACE: Final = Kind(_grace, lambda v: f"{v:g}", "SECONDS")
TEXT: Final = Kind(str.strip, str, "TEXT")
NAMES: Final = Kind(_names, lambda v: ",".join(v), "NAME[,NAME...]")
CACHE: Final = Kind(_cache, lambda v: f"{v.ttl_ms},{v.scope}", "TTL_MS[,SCOPE]")
STORE: Final = Kind(_store, _hidden_url, "URL")
TASK_STORE: Final = Kind(_task_store, _hidden_url, "PATH/URL")
ADDRESS: Final = Kind(_address, str, "[HOST:]PORT[/PATH]")
SECRET: Final = Kind(str.strip, lambda v: "set", "TEXT", secret=True)
def _api_headers(text: str) -> tuple[str, ...]:
    from mcpkit.cli.run_openapi import header_lines

    return header_lines(text)


API_HEADERS: Final = Kind(_api_headers, lambda v: f"{len(v)} header{'s' * (len(v) != 1)}",
                          "'NAME: VALUE'", secret=True)
KEYS: Final = Kind(_names, lambda v: f"{len(v)} key{'s' * (len(v) != 1)}", "KEY[,KEY...]",
                   secret=True)


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


def _default_text(setting: Setting) -> str:
    if setting.server_option:
        from mcpkit.server.options import ServerOptions

        value: Any = ServerOptions()
        for part in setting.name.split("."):
            value = option_at(value, part)
    else:
        value = setting.default
    if value is None or value == ():
        return "—"
    return setting.kind.text(value)


def _option_path(name: str) -> str:
    """Where a server option lives, as code writes it: `ServerOptions.page_size`, or an
    extension's `ServerOptions.extensions["tasks"].lease_s`."""
    from mcpkit.server.options import ServerOptions

    head, dot, rest = name.partition(".")
    if not dot or head in ServerOptions.__dataclass_fields__:
        return f"ServerOptions.{name}"
    return f'ServerOptions.extensions["{head}"].{rest}'


def settings_markdown() -> str:
    """docs/settings.md, from `SETTINGS` (written by `scripts/settings-doc`)."""
    rows = []
    for s in SETTINGS:
        flag = f"`{s.flag}`" if s.flag else "—"
        sets = f"`{_option_path(s.name)}`" if s.server_option else "`mcpkit run`" + (
            f", `ServerOptions.{s.also_sets}`" if s.also_sets else "")
        words = s.help.replace("*", "\\*").replace("|", "\\|")
        rows.append(f"| `{s.env}` | {flag} | {sets} | `{s.shown_as}` | "
                    f"{_default_text(s)} | {words} |")
    code_only = "\n".join(f"- `ServerOptions.{name}`: {why}." for name, why in CODE_ONLY.items())
    return _PAGE.format(rows="\n".join(rows), code_only=code_only)


_PAGE = """# Settings

<!-- Generated from mcpkit.cli.settings.SETTINGS by scripts/settings-doc; edit that table, not
this file (tests/cli/test_settings.py fails when the two differ). -->

Every option of `mcpkit run`, and every `ServerOptions` field that text can give, has an
environment variable. A value is taken from the first of these that has it:

1. the flag on the command line (for the settings that have one);
2. the environment (`MCPKIT_...`);
3. the env file given with `mcpkit run --env-file FILE` (`NAME=value` lines, `#` comments,
   quotes as a shell writes them); its other variables reach the server's code as environment
   variables too, unless the environment already has them;
4. the server file's own `ServerOptions`, else the default below.

`mcpkit run TARGET --show-config` prints each value and where it came from (a secret is
shown hidden), and serves nothing. A value that does not fit its setting is refused before
the server starts, in one line naming the flag or variable, where it came from and what is
expected; so is an `MCPKIT_` name in an env file that is no setting, and one in the
environment close to a setting's name gets a warning (`MCPKIT_PAGESIZE`: did you mean
`MCPKIT_PAGE_SIZE`?).

A switch is `1`, `true`, `yes` or `on` (`0`, `false`, `no`, `off`); a list is comma- or
space-separated; `MCPKIT_HTTP=1` serves on the default address.

| variable | flag | sets | value | default | what it does |
| --- | --- | --- | --- | --- | --- |
{rows}

Not settable from outside the server's code:

{code_only}
"""
