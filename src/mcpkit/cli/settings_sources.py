"""Where each setting of `mcpkit run` comes from: the flag, else the environment, else the env
file (`--env-file`), else the server file's options or the default; and `--show-config`,
which prints each value with its source.

`resolve` weighs the three sources of every `Setting` (`mcpkit.cli.settings`) and reads the
winning text with the setting's kind, so a bad value is refused in one line naming the flag or
the variable and where it was set. A blank variable counts as unset (as `MCPKIT_STORE` always
has). Of settings that exclude each other (`--stdio`, `--http`) the one from the stronger
source wins; two from the same source are refused.

A setting with no flag that is no `ServerOptions` field (a secret such as
`MCPKIT_AUTH_CLIENT_SECRET`) is read where it is used, from the environment: from an env file,
`export` puts it there.

`export` hands what this process decided to the processes it starts (the `--reload` child,
the `--workers` processes): every `ServerOptions` value that came from a flag or the file is
put in the environment under its variable, so each child resolves the same options from the
environment alone (the run options go as flags, or in the workers' spec); the env file's
other variables go there too, unless already set, so the server's own code reads them.

The env file is read with python-dotenv (`dotenv_values`: `NAME=value` lines, comments, quotes
and `${VAR}` as a shell writes them), which never changes the environment itself.
"""

from __future__ import annotations

import argparse
import difflib
import os
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.cli.setting_kinds import SWITCH, TRUE_WORDS
from mcpkit.cli.settings import SETTINGS, Setting, option_at
from mcpkit.cli.usage import UsageError

__all__ = [
    "OTHER_VARIABLES",
    "Resolved",
    "export",
    "read_env_file",
    "resolve",
    "server_option_changes",
    "show_config",
    "stray_names",
]

OTHER_VARIABLES: Final = frozenset({
    "MCPKIT_RUN_SPEC", "MCPKIT_CLIENT_SECRET", "MCPKIT_DATA_DIR", "MCPKIT_SPEC_DIR",
})
"""mcpkit's variables that are not settings of `mcpkit run` (so never taken for a typo)."""

FLAG, ENVIRONMENT, FILE, SERVER, DEFAULT = 4, 3, 2, 1, 0
"""How strong a source is: a higher one wins."""


@dataclass(frozen=True)
class Resolved:
    """One setting's value, the text it was read from, and where that text was."""

    setting: Setting
    value: Any
    text: str | None
    source: str
    rank: int


def read_env_file(path: str) -> dict[str, str]:
    """The variables of an env file; refused in one line when it cannot be read."""
    if not os.path.isfile(path):
        raise UsageError(f"--env-file {path}: no such file")
    from dotenv import dotenv_values

    try:
        values = dotenv_values(path, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--env-file {path}: cannot read it ({exc})") from None
    return {name: value for name, value in values.items() if value is not None}


def _given(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name)
    return value if value is not None and value.strip() else None


def _read(setting: Setting, text: str | list[str], where: str) -> Any:
    try:
        if isinstance(text, list):  # a repeated flag: each value read, all kept
            return tuple(v for part in text for v in setting.kind.read(part))
        if setting.const is not None and text.strip().lower() in TRUE_WORDS:
            return setting.const
        return setting.kind.read(text)
    except ValueError as exc:
        reason = str(exc)
        if isinstance(text, str) and repr(text) not in reason and where.startswith("--"):
            where = f"{where} {text!r}"  # the reason does not quote the value: say it
        raise UsageError(f"{where}: {reason}") from None


def resolve(args: argparse.Namespace | None, environ: Mapping[str, str],
            file_values: Mapping[str, str], file_name: str | None = None
            ) -> dict[str, Resolved]:
    """Every setting that has a value from a flag, the environment or the file, by name."""
    found: dict[str, Resolved] = {}
    for s in SETTINGS:
        flag = getattr(args, s.dest, None) if args is not None and s.flag else None
        if flag is not None:
            text: Any = flag
            found[s.name] = Resolved(s, _read(s, text, s.flag or s.env),
                                     ",".join(text) if isinstance(text, list) else text,
                                     s.flag or s.env, FLAG)
        elif (text := _given(environ, s.env)) is not None:
            where = f"{s.env} (environment)"
            found[s.name] = Resolved(s, _read(s, text, f"{s.env}={text!r} (environment)"),
                                     text, where, ENVIRONMENT)
        elif (text := _given(file_values, s.env)) is not None:
            where = f"{s.env} ({file_name})"
            found[s.name] = Resolved(s, _read(s, text, f"{s.env}={text!r} in {file_name}"),
                                     text, where, FILE)
    _one_of_each_group(found)
    return found


def _one_of_each_group(found: dict[str, Resolved]) -> None:
    groups: dict[str, list[Resolved]] = {}
    for r in found.values():
        if r.setting.group is not None and r.value not in (False, None):
            groups.setdefault(r.setting.group, []).append(r)
    for members in groups.values():
        members.sort(key=lambda r: r.rank, reverse=True)
        if len(members) > 1 and members[0].rank == members[1].rank:
            raise UsageError(f"{members[0].source} and {members[1].source} exclude each other; "
                             "set one of them")
        for loser in members[1:]:
            del found[loser.setting.name]


def stray_names(environ: Mapping[str, str], file_values: Mapping[str, str],
                file_name: str | None) -> tuple[list[str], list[str]]:
    """`MCPKIT_` names that are no setting: those of the file (each refused), and those of
    the environment that look like a setting mistyped (each warned about)."""
    known = {s.env for s in SETTINGS} | OTHER_VARIABLES

    def hint(name: str) -> str:
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
        return f" (did you mean {close[0]}?)" if close else ""

    refused = [f"{file_name}: {name} is no setting of mcpkit run{hint(name)}"
               for name in file_values if name.startswith("MCPKIT_") and name not in known]
    warned = [f"{name} is no setting of mcpkit run{hint(name)}"
              for name in environ if name.startswith("MCPKIT_") and name not in known
              and hint(name)]
    return refused, warned


def export(found: Mapping[str, Resolved], file_values: Mapping[str, str],
           environ: MutableMapping[str, str]) -> None:
    """Put the `ServerOptions` settings that came from a flag or the file into `environ`, for
    the processes started next, and the file's variables that are not `MCPKIT_` ones, where
    `environ` has none. (The run options reach a child as its flags, or in the workers' spec:
    in the environment, `MCPKIT_RELOAD` would make a reloading child reload too.)"""
    for r in found.values():
        if r.setting.server_option and r.rank in (FLAG, FILE) and r.text is not None:
            environ[r.setting.env] = r.text
        elif r.setting.flag is None and r.rank == FILE and r.text is not None:
            environ[r.setting.env] = r.text  # a secret of the file (no flag), read from there
    for name, value in file_values.items():
        if not name.startswith("MCPKIT_"):
            environ.setdefault(name, value)


def server_option_changes(found: Mapping[str, Resolved]) -> dict[str, Any]:
    """The `ServerOptions` fields to change, by dotted name (`tasks.lease_s`)."""
    return {name: r.value for name, r in found.items() if r.setting.server_option}


def _current(options: Any, name: str) -> Any:
    value = options
    for part in name.split("."):
        try:
            value = option_at(value, part)
        except AttributeError:
            return None
    return value


def show_config(found: Mapping[str, Resolved], server: Any) -> str:
    """Each setting's value and where it came from, one a line (secrets hidden)."""
    from mcpkit.server.options import ServerOptions

    defaults = ServerOptions()
    rows = [("setting", "value", "from")]
    through = {r.setting.also_sets: r for r in found.values()
               if r.setting.also_sets and r.value not in (False, None)}
    for s in SETTINGS:
        r = found.get(s.name) or through.get(s.name)
        if r is not None and r.setting is not s:  # `--dev` sets expose_errors
            value, source = _current(server.options, s.name) if server else r.value, r.source
        elif r is not None:
            value, source = r.value, r.source
        elif s.server_option and server is not None:
            value = _current(server.options, s.name)
            source = "server file" if value != _current(defaults, s.name) else "default"
        elif s.server_option:
            value, source = _current(defaults, s.name), "default"
        else:
            value, source = s.default, "default"
        shown = "—" if value is None or value == () else s.kind.text(value)
        if s.kind.secret and value:
            shown = f"{shown}, hidden"
        if s.kind is SWITCH and value is None:
            shown = "false"
        rows.append((s.flag or s.env, shown, source))
    width = [max(len(row[i]) for row in rows) for i in range(2)]
    return "\n".join(f"{a:<{width[0]}}  {b:<{width[1]}}  {c}" for a, b, c in rows)
