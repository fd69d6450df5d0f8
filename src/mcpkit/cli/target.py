"""Finding the `Server` a command line names: `path/to/file.py[:name]` or `pkg.module[:name]`."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any

from mcpkit.errors import TargetError
from mcpkit.protocol.extras import explain

__all__ = [
    "TargetError",
    "load_server",
]


def split_target(target: str) -> tuple[str, str]:
    head, sep, name = target.rpartition(":")
    if sep and name.isidentifier() and head:
        return head, name
    return target, "server"


def load_server(target: str) -> Any:
    """Import the target and return its Server object."""
    from mcpkit.server.server import Server

    where, name = split_target(target)
    if where.endswith(".py") or os.sep in where or os.path.exists(where):
        module = _load_file(where)
    else:
        try:
            module = importlib.import_module(where)
        except ModuleNotFoundError as exc:
            if (missing := explain(exc)) is not None:
                raise TargetError(f"{where}: {missing}") from None
            if exc.name and where.startswith(exc.name):
                raise TargetError(f"no module named {where!r} (and no file of that name)") from None
            raise TargetError(f"importing {where!r} failed: {exc}") from None
        except Exception as exc:
            if (missing := explain(exc)) is not None:
                raise TargetError(f"{where}: {missing}") from None
            raise TargetError(f"importing {where!r} failed: {type(exc).__name__}: {exc}") from None
    if not hasattr(module, name):
        found = [k for k, v in vars(module).items() if isinstance(v, Server)]
        hint = f"; it has {', '.join(found)} (use {where}:{found[0]})" if found else ""
        raise TargetError(f"{where} has no attribute {name!r}{hint}")
    server = getattr(module, name)
    if not isinstance(server, Server):
        raise TargetError(
            f"{where}:{name} is a {type(server).__name__}, not an mcpkit Server"
        )
    return server


def _load_file(path: str) -> Any:
    if not os.path.isfile(path):
        raise TargetError(f"file not found: {path}")
    full = os.path.abspath(path)
    directory = os.path.dirname(full)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    module_name = os.path.splitext(os.path.basename(full))[0] or "server"
    spec = importlib.util.spec_from_file_location(module_name, full)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise TargetError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from None
    except Exception as exc:
        if (missing := explain(exc)) is not None:  # one line naming the extra to install
            raise TargetError(f"{path}: {missing}") from None
        raise TargetError(f"importing {path} failed: {type(exc).__name__}: {exc}") from None
    return module
