"""docs/settings.md, made from the settings table of `mcpkit run` (`mcpkit.cli.settings`):
one row per setting (its variable, flag, what it sets, its value's form, its default and its
help) and the `ServerOptions` fields no text can give. `scripts/settings-doc` writes it;
`tests/cli/test_settings.py` fails while the file differs.

Imports `mcpkit.cli.settings` and, for the defaults, `ServerOptions`.
"""

from __future__ import annotations

from typing import Any

from mcpkit.cli.settings import CODE_ONLY, SETTINGS, Setting, option_at

__all__ = [
    "settings_markdown",
]


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
