"""The official conformance suite's server leg (`scripts/conformance`) against three replicas
of the conformance server behind nginx, on PostgreSQL and on Redis: every scenario it judges
(the scored ones at 2026-07-28 and 2025-11-25, the not-scored ones mcpkit passes too, every
scenario at 2025-06-18) gets the verdict it gets from one server, and so do the counts."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from nginx import ROOT, Cluster, nginx_binary

EVERYTHING = str(ROOT / "tests" / "conformance" / "everything_server.py")
SCORED = re.compile(r"^conformance server (2026-07-28|2025-11-25): (\d+) passed, (\d+) failed$",
                    re.M)
_TIMEOUT_S = 1500
ENGINES = ["postgres", "redis"]


Leg = tuple[dict[str, tuple[int, int]], dict[tuple[str, str], str]]
"""The scored counts per revision, and the verdict of each (label, scenario) judged."""


def server_leg(url: str | None) -> Leg:
    """One server leg against `url` (None: the script's own single server)."""
    env = {**os.environ, "CONFORMANCE_ONLY": "server"}
    env.pop("CONFORMANCE_SERVER_URL", None)
    if url is not None:
        env["CONFORMANCE_SERVER_URL"] = url
    with tempfile.TemporaryDirectory(prefix="mcpkit-verdicts-") as folder:
        verdicts = Path(folder) / "verdicts.tsv"
        env["MCPKIT_CONFORMANCE_VERDICTS"] = str(verdicts)
        done = subprocess.run(["bash", str(ROOT / "scripts" / "conformance")], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=_TIMEOUT_S,
                              check=False)
        lines = verdicts.read_text().splitlines() if verdicts.exists() else []
    output = done.stdout[-3000:] + done.stderr[-3000:]
    counts = {rev: (int(p), int(f)) for rev, p, f in SCORED.findall(done.stdout)}
    assert set(counts) == {"2026-07-28", "2025-11-25"}, output
    judged = {}
    for line in lines:
        label, scenario, verdict = line.split("\t")
        judged[label, scenario] = verdict
    labels = {label for label, _ in judged}
    assert {"server 2026-07-28", "server 2025-11-25", "server 2025-06-18"} <= labels, output
    return counts, judged


@pytest.fixture(scope="module")
def single_server() -> Leg:
    return server_leg(None)


@pytest.fixture(scope="module", params=ENGINES)
def everything_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    nginx_binary()
    cluster = Cluster(request.param, request.getfixturevalue(f"{request.param}_url"), EVERYTHING,
                      extra_env={"CONFORMANCE_SHARED_TASKS": "1"})
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


# Two runs of the suite's server leg (one server's, in the module fixture, and the cluster's),
# each about a minute on a quiet machine and the first item's setup (PostgreSQL, three replicas,
# nginx, one server's leg) 70 s on a loaded one: far past the suite's per-test bound of 120 s.
# Each leg's own bound ends it first, with its output; this bound leaves room for the setup.
@pytest.mark.timeout(2 * _TIMEOUT_S + 300)
def test_the_server_leg_through_nginx_judges_each_scenario_as_one_servers(
        everything_cluster: Cluster, single_server: Leg) -> None:
    counts, verdicts = server_leg(everything_cluster.url)
    single_counts, single_verdicts = single_server
    assert set(single_verdicts.values()) <= {"passed", "expected failure"}, single_verdicts
    differ = {key: (single_verdicts.get(key), verdicts.get(key))
              for key in set(verdicts) | set(single_verdicts)
              if verdicts.get(key) != single_verdicts.get(key)}
    assert differ == {}, "(one server's verdict, the cluster's) per (label, scenario)"
    assert counts == single_counts
    served = set(everything_cluster.balancer.served_by())
    assert len(served) >= 3, served  # every replica took part
