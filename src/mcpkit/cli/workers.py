"""`mcpkit run FILE --http ... --workers N`: N processes on one address, through uvicorn's own
worker manager, sharing one store.

uvicorn starts, watches and restarts its workers itself, and it needs the application as an
import string so each worker can build its own. That string is `mcpkit.cli.workers:app`, a
factory: the parent puts what `mcpkit run` was told (the target, the path, the hosts and
origins, `--dev`, `--store`, `--session-idle`, `--auth-*`) in `MCPKIT_RUN_SPEC`, which every worker
inherits, and each worker's `app()` loads FILE and builds the same ASGI application `mcpkit
run --http` serves. The target is made absolute first, so a worker finds it from any folder.

Workers share nothing but the store, so more than one needs a store every process can share
whole: PostgreSQL or Redis, which also carry the broker (changes, legacy answers, task
controls). Memory and SQLite are refused with one line: the workers would each keep their own
legacy sessions and streams, and a client would lose its session on its next request.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Final

__all__ = [
    "SPEC_ENV",
    "app",
    "refusal",
    "run_from_args",
    "run_workers",
    "spec_of",
]

SPEC_ENV: Final = "MCPKIT_RUN_SPEC"
"""The environment variable carrying `mcpkit run`'s options from the parent to its workers."""
_SHARED: Final = ("postgresql", "redis")


def refusal(workers: int, store: str | None) -> str | None:
    """Why `--workers N` cannot run with this store URL (the option's or MCPKIT_STORE's), or
    None when it can."""
    if workers < 1:
        return f"--workers {workers}: expected 1 or more processes"
    if workers == 1:
        return None
    from mcpkit.store.urls import StoreURLError, parse_store_url

    kind = "memory"
    if store:
        try:
            kind = parse_store_url(store).kind
        except StoreURLError as exc:
            return f"--store {store!r}: {exc.reason}"
    if kind not in _SHARED:
        return (f"--workers {workers} needs a store every worker shares: add --store "
                "postgresql://USER@HOST/DB or --store redis://HOST:PORT/0 (or set MCPKIT_STORE);"
                f" a {kind} store is per process, so a client's legacy session, its streams "
                "and the changes it listens to would stay with one worker")
    return None


def spec_of(target: str, address: str, options: dict[str, Any]) -> str:
    """What every worker needs to build the app, as the JSON `MCPKIT_RUN_SPEC` holds."""
    from mcpkit.cli.target import split_target

    where, name = split_target(target)
    if where.endswith(".py") or os.sep in where or os.path.exists(where):
        where = str(Path(where).resolve())
    return json.dumps({"target": f"{where}:{name}", "address": address, **options})


def app() -> Any:
    """The ASGI application of one worker, built from `MCPKIT_RUN_SPEC` (uvicorn's factory)."""
    from mcpkit.cli.run_options import apply_run_options
    from mcpkit.cli.settings_sources import resolve, server_option_changes
    from mcpkit.cli.target import load_server
    from mcpkit.protocol.http import LOOPBACK_HOSTS
    from mcpkit.transports.http_server.app import HTTPApp
    from mcpkit.transports.http_server.options import HTTPOptions
    from mcpkit.transports.http_server.running import parse_address

    spec = json.loads(os.environ[SPEC_ENV])
    server = load_server(spec["target"])
    # The ServerOptions settings reach a worker as environment variables (the parent exported
    # what its flags and env file said), so each worker reads them as the parent did.
    apply_run_options(server, dev=spec.get("dev", False), store=spec.get("store"),
                      options=server_option_changes(resolve(None, os.environ, {})))
    server.sealer.check_keys()
    host, _, path = parse_address(spec["address"])
    hosts = tuple(spec.get("allow_host", ()))
    if host in ("localhost", "::1") or host.startswith("127."):
        hosts = LOOPBACK_HOSTS + hosts
    elif not hosts:
        hosts = ("*",)
    settings: dict[str, Any] = {"path": path, "allowed_hosts": hosts,
                                "allowed_origins": tuple(spec.get("allow_origin", ()))}
    if spec.get("session_idle") is not None:
        settings["session_idle_s"] = spec["session_idle"]
    if spec.get("auth") is not None:
        from mcpkit.cli.run_auth import protected_resource, settings_from_json

        settings["auth"] = protected_resource(settings_from_json(spec["auth"]))
    return HTTPApp(server, HTTPOptions(**settings))


def run_workers(target: str, address: str, workers: int, options: dict[str, Any]) -> int:
    """Serve `target` on `address` with `workers` uvicorn worker processes until interrupted."""
    import uvicorn

    from mcpkit.transports.http_server.limits import ListenerLimits
    from mcpkit.transports.http_server.listener import LimitedHttpTools, uvicorn_settings
    from mcpkit.transports.http_server.running import parse_address

    host, port, path = parse_address(address)
    os.environ[SPEC_ENV] = spec_of(target, address, options)
    if not (host in ("localhost", "::1") or host.startswith("127.")) and not options.get(
            "allow_host"):
        print(f"mcpkit: warning: serving on {host} with any Host header accepted; name the "
              "public host with --allow-host to keep DNS-rebinding protection", file=sys.stderr)
    print(f"mcpkit: serving {target} at http://{host}:{port}{path} with {workers} worker "
          "processes (uvicorn)", file=sys.stderr, flush=True)
    settings = uvicorn_settings(ListenerLimits())
    # The protocol class goes to the workers by name, each importing it: a class made for
    # these limits cannot be pickled to a spawned process; the named ones hold the defaults.
    named = "LimitedH11" if LimitedHttpTools is None else "LimitedHttpTools"
    settings["http"] = f"mcpkit.transports.http_server.listener:{named}"
    uvicorn.run(f"{__name__}:app", factory=True, host=host, port=port, workers=workers,
                lifespan="on", log_level="warning", access_log=False, server_header=False,
                timeout_graceful_shutdown=math.ceil(_grace()), **settings)
    return 0


def _grace() -> float:
    """How long uvicorn lets a stopping worker's requests finish: `--grace`, which the parent
    exported for the workers (MCPKIT_GRACE_S), else the default of `ServerOptions.grace_s`."""
    from mcpkit.cli.settings import by_name
    from mcpkit.server.options import ServerOptions

    setting = by_name()["grace_s"]
    text = os.environ.get(setting.env)
    return float(setting.kind.read(text)) if text else ServerOptions().grace_s


def run_from_args(args: Any) -> int:
    """`mcpkit run ... --http ... --workers N`, checked: one line and status 2 when it cannot."""
    from mcpkit.store.urls import store_from_env

    problem = refusal(args.workers, args.store or store_from_env())
    if problem is None and args.reload:
        problem = ("--reload restarts one development server; it does not combine with "
                   "--workers")
    if problem is not None:
        print(f"mcpkit run: {problem}", file=sys.stderr)
        return 2
    return run_workers(args.target, args.http, args.workers, {
        "allow_host": list(args.allow_host), "allow_origin": list(args.allow_origin),
        "dev": bool(args.dev), "store": args.store, "session_idle": args.session_idle,
        "auth": args.auth.to_json() if args.auth is not None else None})
