"""Deciding the era: the probe's decision table, the fallbacks over stdio, the era cache."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcpkit.client import Client, ClientOptions, EraCache, NoCommonVersionError
from mcpkit.client.era import read_probe

MakeRaw = Callable[..., Client]
MODERN = "2026-07-28"


def error(code: int, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": "x"}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": 1, "error": err}


DISCOVER = {"jsonrpc": "2.0", "id": 1, "result": {
    "resultType": "complete", "supportedVersions": ["2025-11-25", MODERN, "2099-01-01"],
    "capabilities": {}, "ttlMs": 0, "cacheScope": "public"}}


# -- the decision table, no I/O --------------------------------------------------------------


def test_a_discover_result_means_modern_at_the_highest_common_version() -> None:
    outcome = read_probe(DISCOVER, MODERN, ours=(MODERN, "2025-12-01"))
    assert (outcome.era, outcome.version, outcome.retry) == ("modern", MODERN, False)
    assert outcome.discover is DISCOVER["result"]


def test_a_discover_result_for_another_version_means_retry_with_it() -> None:
    outcome = read_probe(DISCOVER, "2025-12-01", ours=("2025-12-01", MODERN))
    assert (outcome.era, outcome.version, outcome.retry) == ("modern", MODERN, True)


@pytest.mark.parametrize("code", [-32601, -32602, -32600, -32603, -32000, -32002, 1])
def test_any_error_that_is_not_a_modern_one_means_legacy(code: int) -> None:
    assert read_probe(error(code), MODERN).era == "legacy"


def test_silence_and_non_discover_results_mean_legacy() -> None:
    assert read_probe(None, MODERN).era == "legacy"
    assert read_probe({"jsonrpc": "2.0", "id": 1, "result": {}}, MODERN).era == "legacy"


def test_unsupported_version_with_a_common_version_means_modern_retry() -> None:
    outcome = read_probe(error(-32022, {"supported": [MODERN], "requested": "x"}), "x",
                         ours=("x", MODERN))
    assert (outcome.era, outcome.version, outcome.retry) == ("modern", MODERN, True)


def test_unsupported_version_listing_only_legacy_versions_means_legacy() -> None:
    outcome = read_probe(error(-32022, {"supported": ["2025-11-25"], "requested": MODERN}), MODERN)
    assert outcome.era == "legacy"


def test_unsupported_version_with_nothing_in_common_is_an_error_naming_both_sides() -> None:
    with pytest.raises(NoCommonVersionError, match="2099-01-01"):
        read_probe(error(-32022, {"supported": ["2099-01-01"], "requested": MODERN}), MODERN)


@pytest.mark.parametrize("code", [-32020, -32021])
def test_other_modern_errors_mean_modern(code: int) -> None:
    assert read_probe(error(code), MODERN).era == "modern"


# -- the era cache ----------------------------------------------------------------------------


def test_the_era_cache_file_survives_a_new_process_and_ignores_garbage(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "eras.json"
    EraCache(path).put("stdio:a", "legacy", None)
    again = EraCache(path)
    remembered = again.get("stdio:a")
    assert remembered is not None and remembered.era == "legacy"
    again.forget("stdio:a")
    assert EraCache(path).get("stdio:a") is None
    path.write_text("{not json")
    assert EraCache(path).get("stdio:a") is None


def test_the_era_cache_keeps_only_the_most_recent_servers(tmp_path: Path) -> None:
    cache = EraCache(tmp_path / "eras.json", limit=3)
    for i in range(5):
        cache.put(f"k{i}", "modern", MODERN)
    assert sorted(json.loads((tmp_path / "eras.json").read_text())) == ["k2", "k3", "k4"]


# -- the probe over stdio, against real processes ------------------------------------------


def pids_and_methods(log: Path) -> list[tuple[int, str | None]]:
    out = []
    for line in log.read_text().splitlines():
        pid, body = line.split(" ", 1)
        out.append((int(pid), json.loads(body).get("method")))
    return out


@pytest.mark.parametrize("mode", ["legacy-32601", "legacy-32602", "legacy-empty", "legacy-only"])
async def test_a_legacy_server_is_reached_by_initialize_on_the_same_process(
    raw_client: MakeRaw, raw_log: Path, mode: str
) -> None:
    client = raw_client(mode)
    tools = await client.list_tools()
    assert client.era == "legacy" and client.protocol_version == "2025-11-25"
    assert [t["name"] for t in tools] == ["ask", "log"]
    seen = pids_and_methods(raw_log)
    assert len({pid for pid, _ in seen}) == 1
    assert [m for _, m in seen][:3] == ["server/discover", "initialize", "notifications/initialized"]


async def test_a_silent_server_is_waited_for_once_then_initialized(
    raw_client: MakeRaw, raw_log: Path
) -> None:
    client = raw_client("legacy-silent", options=ClientOptions(probe_timeout=0.3))
    await client.connect()
    assert client.era == "legacy"
    methods = [m for _, m in pids_and_methods(raw_log)]
    assert methods.count("server/discover") == 1, "probed once, not twice"
    assert "notifications/cancelled" not in methods, "a legacy server is not sent cancellations"


async def test_a_server_that_dies_on_the_probe_is_restarted_once_for_initialize(
    raw_client: MakeRaw, raw_log: Path
) -> None:
    client = raw_client("legacy-die")
    result = await client.call_tool("log")
    assert result["structuredContent"] == {"logged": 3}
    seen = pids_and_methods(raw_log)
    pids = list(dict.fromkeys(pid for pid, _ in seen))
    assert len(pids) == 2
    assert [m for pid, m in seen if pid == pids[0]] == ["server/discover"]
    assert next(m for pid, m in seen if pid == pids[1]) == "initialize"


async def test_a_modern_server_rejecting_the_first_version_is_retried_not_abandoned(
    raw_client: MakeRaw,
) -> None:
    client = raw_client("reject-first")
    await client.connect()
    assert client.era == "modern" and client.protocol_version == MODERN
    discovers = client.tap.requests("server/discover")  # type: ignore[attr-defined]
    assert len(discovers) == 2 and discovers[0]["id"] != discovers[1]["id"]
    assert client.tap.requests("initialize") == []  # type: ignore[attr-defined]
    assert client.server_info == {"name": "raw", "version": "1"}


async def test_a_server_with_no_common_version_is_reported_not_guessed(raw_client: MakeRaw) -> None:
    client = raw_client("future")
    with pytest.raises(NoCommonVersionError, match="2099-01-01"):
        await client.connect()


async def test_a_remembered_legacy_era_skips_the_probe_next_time(
    raw_client: MakeRaw, raw_log: Path, tmp_path: Path
) -> None:
    from mcpkit.client.era import PROCESS_ERAS

    options = ClientOptions(era_cache=tmp_path / "eras.json", probe_timeout=5)
    first = raw_client("legacy-32601", options=options)
    await first.connect()
    await first.close()
    PROCESS_ERAS.clear()  # a new run: only the file remembers
    second = raw_client("legacy-32601", options=options)
    await second.connect()
    assert second.era == "legacy"
    assert second.tap.requests("server/discover") == []  # type: ignore[attr-defined]
    assert [m for _, m in pids_and_methods(raw_log)].count("server/discover") == 1


async def test_a_wrong_remembered_era_is_probed_again(
    raw_client: MakeRaw, tmp_path: Path
) -> None:
    from mcpkit.client.era import PROCESS_ERAS

    path = tmp_path / "eras.json"
    client = raw_client("modern", options=ClientOptions(era_cache=path))
    assert client._core.connector is not None
    EraCache(path).put(client._core.connector.key, "legacy", None)
    PROCESS_ERAS.clear()
    await client.connect()
    assert client.era == "modern"
    remembered = EraCache(path).get(client._core.connector.key)
    assert remembered is not None and remembered.era == "modern"


async def test_pinned_eras_skip_the_probe(raw_client: MakeRaw) -> None:
    modern = raw_client("modern", options=ClientOptions(era="modern"))
    assert (await modern.call_tool("plain"))["structuredContent"]["hasRequestState"] is False
    assert modern.tap.requests("server/discover") == []  # type: ignore[attr-defined]
    legacy = raw_client("legacy-32601", options=ClientOptions(era="legacy"))
    await legacy.connect()
    assert legacy.tap.requests("server/discover") == []  # type: ignore[attr-defined]
    assert legacy.era == "legacy"
