"""The official conformance suite's server leg (`scripts/conformance`) against three replicas
of the conformance server behind nginx, on PostgreSQL and on Redis: at 2026-07-28 and at
2025-11-25 it counts what one server counts, scenario for scenario."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator

import pytest
from nginx import ROOT, Cluster, nginx_binary

EVERYTHING = str(ROOT / "tests" / "conformance" / "everything_server.py")
SCORED = re.compile(r"^conformance server (2026-07-28|2025-11-25): (\d+) passed, (\d+) failed$",
                    re.M)
_TIMEOUT_S = 1500
ENGINES = ["postgres", "redis"]


def server_leg(url: str | None) -> dict[str, tuple[int, int]]:
    """The scored per-revision counts of one server leg, against `url` (None: the script's
    own single server)."""
    env = {**os.environ, "CONFORMANCE_ONLY": "server"}
    env.pop("CONFORMANCE_SERVER_URL", None)
    if url is not None:
        env["CONFORMANCE_SERVER_URL"] = url
    done = subprocess.run(["bash", str(ROOT / "scripts" / "conformance")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=_TIMEOUT_S, check=False)
    counts = {rev: (int(p), int(f)) for rev, p, f in SCORED.findall(done.stdout)}
    assert set(counts) == {"2026-07-28", "2025-11-25"}, done.stdout[-3000:] + done.stderr[-3000:]
    return counts


@pytest.fixture(scope="module")
def single_server_counts() -> dict[str, tuple[int, int]]:
    return server_leg(None)


@pytest.fixture(scope="module", params=ENGINES)
def everything_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    nginx_binary()
    cluster = Cluster(request.param, request.getfixturevalue(f"{request.param}_url"), EVERYTHING)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def test_the_server_leg_through_nginx_counts_as_one_servers(
        everything_cluster: Cluster, single_server_counts: dict[str, tuple[int, int]]) -> None:
    balanced = server_leg(everything_cluster.url)
    assert balanced == single_server_counts
    served = set(everything_cluster.balancer.served_by())
    assert len(served) >= 3, served  # every replica took part
