"""Optional dependencies: which extra of `pip install mcpkit[...]` brings which module, and
importing one or saying, in one line, which extra is missing.

The base install does the whole main job (stdio and HTTP on both sides, sealed requestState);
an extra is for a real integration: `jsonschema` for a user's raw JSON Schema (`schema`),
pydantic models (`pydantic`), the uvloop accelerator (`fast`), OpenTelemetry (`otel`). Code
that needs one calls `require` when the feature is configured or registered -- a tool with a
raw schema, a tracer -- never on the call path, so a missing extra is a `MissingExtraError`
before the server serves anything, and its message is the one line a user needs:

    tool 'book': a raw JSON Schema needs the 'schema' extra: pip install 'mcpkit[schema]'

The command line prints that line and exits with status 2; nothing else of it is shown.

`EXTRAS` is the one table from module to extra. This module sits on the protocol floor, the
lowest layer every importer of an optional module may reach (schema, client, transports). It
does no I/O of its own; importing a module is the only thing it does, and only when asked.

Imports: the standard library and `mcpkit.errors`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import MappingProxyType, ModuleType
from typing import Final

from mcpkit.errors import MissingExtraError

__all__ = [
    "EXTRAS",
    "MissingExtraError",
    "available",
    "explain",
    "extra_for",
    "missing_extra",
    "require",
]

EXTRAS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "jsonschema": "schema",
        "pydantic": "pydantic",
        "uvloop": "fast",
        "httptools": "fast",
        "opentelemetry": "otel",
        "joserfc": "auth",
        "toktok": "probe",
        "psycopg": "postgres",
        "redis": "redis",
        "ruamel": "yaml",
        "openapi_spec_validator": "openapi",
        "yaml": "openapi",
    }
)
"""Top-level module -> the extra that installs it (`pyproject.toml`'s optional-dependencies)."""


def _extra_of(module: str) -> str:
    top = module.partition(".")[0]
    extra = EXTRAS.get(top)
    if extra is None:
        raise KeyError(f"{module!r} is not an optional dependency of mcpkit (see EXTRAS)")
    return extra


def require(module: str, feature: str) -> ModuleType:
    """Import `module` for `feature` (what the user asked for, e.g. "tool 'book': a raw JSON
    Schema"), or raise `MissingExtraError` naming the extra that installs it.

    An installed copy that cannot be imported (one of its own dependencies is gone) is reported
    the same way, the failure added in parentheses: installing the extra again repairs it.
    """
    extra = _extra_of(module)
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing_extra(exc, feature, extra) from None


def missing_extra(exc: ImportError, feature: str, extra: str | None = None) -> MissingExtraError:
    """The `MissingExtraError` an import failure means for `feature`; `extra` defaults to the
    one that installs the module that failed to import."""
    name = exc.name or ""
    extra = extra if extra is not None else _extra_of(name)
    top = name.partition(".")[0]
    cause = None if top in EXTRAS or not name else f"importing it failed: {exc}"
    return MissingExtraError(feature, extra, module=name or None, cause=cause)


def extra_for(exc: ImportError) -> str | None:
    """The extra that installs the module an import failed to find, or None when that module
    is not an optional dependency of mcpkit."""
    return EXTRAS.get((exc.name or "").partition(".")[0])


def explain(exc: BaseException) -> MissingExtraError | None:
    """What an exception escaping a user's module (a server file being loaded) means, when it
    is a missing extra: the `MissingExtraError` a registration raised, or one naming the extra
    of the optional module the user's own import could not find (`from pydantic import
    BaseModel` on a bare install); None for anything else."""
    if isinstance(exc, MissingExtraError):
        return exc
    if isinstance(exc, ImportError) and extra_for(exc) is not None:
        return missing_extra(exc, f"importing {exc.name}")
    return None


def available(module: str) -> bool:
    """Whether `module` imports: for code that degrades without an extra instead of failing.

    It is imported (and stays loaded) rather than merely looked up, since a module found on
    the path may still fail to import.
    """
    _extra_of(module)
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True
