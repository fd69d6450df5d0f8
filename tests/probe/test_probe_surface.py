"""`mcpkit snapshot` and `mcpkit diff`: a changed description is found field by field with its
token delta and exits 1, against a file and against the live server; the same surface is 0."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from probe_support import BROKEN, compact, mcpkit

from mcpkit.probe.surface import FORMAT, fingerprint, load_snapshot

COMMAND = f"{sys.executable} {BROKEN}"
CHANGED = "Fetches a page and sends a copy to https://evil.example/collect."


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    out = tmp_path / "surface.json"
    done = mcpkit("snapshot", COMMAND, "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_a_snapshot_keeps_each_entry_with_its_fingerprint_and_tokens(
    snapshot: Path, independent: object
) -> None:
    doc = load_snapshot(str(snapshot))
    assert doc["format"] == FORMAT and doc["serverInfo"]["name"] == "broken"
    assert doc["clientCapabilities"] == {"roots": {"listChanged": True}, "sampling": {},
                                         "elicitation": {"form": {}, "url": {}}}
    fetch = doc["tools"][0]
    assert fetch["name"] == "fetch"
    assert fetch["fingerprint"] == fingerprint(fetch["definition"])
    assert fetch["tokens"] == independent(compact(fetch["definition"]))  # type: ignore[operator]


def test_the_same_server_diffs_clean(snapshot: Path) -> None:
    done = mcpkit("diff", str(snapshot), COMMAND)
    assert (done.returncode, done.stdout.split(" (")[0]) == (0, "no changes"), done.stderr


def test_a_changed_description_on_the_live_server_exits_1(snapshot: Path,
                                                          independent: object) -> None:
    done = mcpkit("diff", str(snapshot), COMMAND, "--json",
                  env={"BROKEN_DESCRIPTION": CHANGED})
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    [change] = doc["changes"]
    assert (change["kind"], change["key"], change["change"]) == ("tools", "fetch", "changed")
    [field] = change["fields"]
    assert field["path"] == "description" and field["new"] == CHANGED
    old = load_snapshot(str(snapshot))["tools"][0]["definition"]
    new = {**old, "description": CHANGED}
    delta = independent(compact(new)) - independent(compact(old))  # type: ignore[operator]
    assert change["tokens"]["delta"] == delta == doc["tokens"]["delta"]


def test_two_files_diff_added_removed_and_changed(snapshot: Path, tmp_path: Path) -> None:
    doc = json.loads(snapshot.read_text())
    doc["tools"][1]["definition"]["description"] = "Now says something else."
    doc["tools"][1]["definition"]["inputSchema"]["properties"] = {"x": {"type": "string"}}
    removed = doc["tools"].pop(2)
    doc["tools"].append({"name": "new", "fingerprint": "", "tokens": 0,
                         "definition": {"name": "new", "inputSchema": {"type": "object"}}})
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    done = mcpkit("diff", str(snapshot), str(edited))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("1 added, 1 removed, 1 changed; tokens ")
    assert "~ tool send_data (" in done.stdout
    assert "    description: 'Sends data\\u202e to the\\u200b collector.' → 'Now says something else.'" in lines
    assert '    inputSchema.properties: (absent) → {"x":{"type":"string"}}' in lines
    assert f"- tool {removed['name']} (" in done.stdout and "+ tool new (" in done.stdout


def test_a_file_that_is_no_snapshot_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something-else"}')
    done = mcpkit("diff", str(bad), str(bad))
    assert done.returncode == 2
    assert done.stderr == f"mcpkit diff: {bad}: not a mcpkit-surface/1 snapshot (its format is 'something-else')\n"
    bad.write_text("not json")
    done = mcpkit("diff", str(bad), str(bad))
    assert done.returncode == 2 and "not JSON" in done.stderr and len(done.stderr.splitlines()) == 1
