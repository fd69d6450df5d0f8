"""The guides stay true: every Python block of docs/client.md, docs/testing-servers.md,
docs/legacy.md, docs/openapi.md and docs/proxy.md runs, in order, and prints what the guide
says it prints.

The blocks of one guide share a namespace, as if typed into one file. A block preceded by
`<!-- file: PATH -->` is a part of that file, shown rather than run here: it must appear in the
file verbatim, and the file itself runs (examples/testing/test_notes.py under pytest, in a
process of its own). The HTTP URL a guide uses is replaced by that of a real server started on
a free port. Every connection the guides' code opens (in memory, stdio, HTTP) is tapped, and
each message in both directions is checked against the official schema of its era.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.client.schema_tap import SchemaTap
from helpers.transports.http_peer import ServerProcess, checked_transport
from helpers.wire import SPEC_DIR, spec_available

from mcpkit.testing import ServerWire
from mcpkit.transports.http_client.transport import HTTPConnector
from mcpkit.transports.memory import InMemory
from mcpkit.transports.stdio.client import StdioServer

pytestmark = pytest.mark.filterwarnings("error::mcpkit.client.ResultAsDictWarning")
"""A guide shows results read as objects: a block that reads one as a dict, unless it says it
does and catches the warning, fails here."""

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GUIDE_URL = "http://127.0.0.1:8000/mcp"
"""The URL the guides connect to; a test server's takes its place."""

_BLOCK = re.compile(r"(?:<!-- file: (?P<file>\S+) -->\n)?```python\n(?P<code>.*?)^```", re.S | re.M)


def blocks(guide: str) -> list[tuple[str | None, str, int]]:
    """The Python blocks of `guide`: (the file it is part of, or None), the code, its line."""
    text = (DOCS / guide).read_text(encoding="utf-8")
    return [(m["file"], m["code"], text.count("\n", 0, m.start()) + 1)
            for m in _BLOCK.finditer(text)]


@contextlib.contextmanager
def tapped_connections() -> Iterator[list[Any]]:
    """Every InMemory, StdioServer, HTTPConnector and ServerWire connection made meanwhile is
    checked against the schema; the checks are listed, each able to say whether it saw a
    problem."""
    checks: list[Any] = []
    memory_connect, stdio_connect = InMemory.connect, StdioServer.connect
    wire_init = ServerWire.__init__

    def tap_of(connector: Any) -> SchemaTap:
        tap = SchemaTap()
        checks.append(tap)
        connector.tap = tap
        return tap

    async def memory(self: InMemory) -> Any:
        tap_of(self)
        return await memory_connect(self)

    async def stdio(self: StdioServer) -> Any:
        tap_of(self)
        return await stdio_connect(self)

    async def http(self: HTTPConnector) -> Any:
        transport = checked_transport(self.url, check_server=True, **self.options)
        checks.append(transport)
        return transport

    def wire(self: ServerWire, server: Any, **options: Any) -> None:
        wire_init(self, server, **options)
        if self.tap is None:
            self.tap = tap_of(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ServerWire, "__init__", wire)
        patch.setattr(InMemory, "connect", memory)
        patch.setattr(StdioServer, "connect", stdio)
        patch.setattr(HTTPConnector, "connect", http)
        yield checks


def run_guide(guide: str, monkeypatch: pytest.MonkeyPatch, url: str | None = None) -> None:
    """Run every block of `guide` that is not part of a file, in one namespace."""
    monkeypatch.chdir(ROOT)
    # The guides run `mcpkit ...` as a user would; it is this interpreter's.
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent),
                                                 os.environ.get("PATH", "")]))
    namespace: dict[str, Any] = {"__name__": f"guide_{Path(guide).stem}"}
    with tapped_connections() as checks:
        for file, code, line in blocks(guide):
            if file is not None:
                continue
            if url is not None:
                code = code.replace(GUIDE_URL, url)
            # dont_inherit: the guide's code runs as a user's file would, without this
            # module's `from __future__ import annotations`.
            exec(compile("\n" * (line) + code, str(DOCS / guide), "exec", dont_inherit=True),
                 namespace)
    taps = [check for check in checks if isinstance(check, SchemaTap)]
    assert any(tap.sent for tap in taps), f"{guide} sent nothing through a tapped connection"
    for check in checks:
        if isinstance(check, SchemaTap):
            assert not check.problems, "messages off the schema:\n" + "\n".join(check.problems)
        else:
            assert not check.server_checks.problems, check.server_checks.problems
            assert check.server_checks.checked > 0 or not spec_available(), (
                "the HTTP server's messages went unchecked")


@pytest.fixture(scope="module")
def quickstart_http() -> Iterator[ServerProcess]:
    server = ServerProcess.start(str(ROOT / "examples" / "quickstart" / "server.py"))
    yield server
    server.stop()


def test_every_block_of_the_client_guide_runs_and_prints_what_it_says(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    quickstart_http: ServerProcess,
) -> None:
    run_guide("client.md", monkeypatch, quickstart_http.url)
    out = capsys.readouterr().out
    for shown in (
        "{'sum': 5}",
        "modern ['echo', 'add']",
        "modern 2026-07-28",
        "legacy 2025-11-25",
        "Hello, Ada!",
        "{'elicitation': {'form': {}}}",
        "tools/call 'greet' asks: Who are you?",
        "[info] demo: greeting someone",
        "1/2: looking up the name",
        "-32602 Unknown tool: 'no_such_tool'",
        "missing: demo://nothing",
        "crunched for 0.2 s",
        "working\ncancelled",
        "Hello, Ada! False",
        "Be kind. demo://motd",
        "7\n2031-03-01 Booking",
        "does not fit Booking: structuredContent.room: missing required property",
        "failed: True",
        "{'total': 4}\nTrue {'total': 4}",
        "{'sum': 42}\n['echo', 'add']",
        "configured",
        "True True\nHello, Ada!\nmodern",
    ):
        assert shown in out, f"docs/client.md should print {shown!r}:\n{out}"


def test_every_block_of_the_legacy_guide_runs_and_prints_what_it_says(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    run_guide("legacy.md", monkeypatch)
    out = capsys.readouterr().out
    for shown in ("legacy 2025-11-25", "Hello, Ada! (answered by 1 round)",
                  "[info] asked for a name", "modern 2026-07-28"):
        assert shown in out, f"docs/legacy.md should print {shown!r}:\n{out}"


def test_every_block_of_the_proxy_guide_runs_and_prints_what_it_says(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    run_guide("proxy.md", monkeypatch)
    out = capsys.readouterr().out
    for shown in ("modern calendar ['book']", "asked: Which day for Ada?",
                  "Ada booked for Tuesday", "Ada, Grace",
                  "input_required elicitation/create 1", "Grace booked for Friday 0",
                  "quickstart {'sum': 5}"):
        assert shown in out, f"docs/proxy.md should print {shown!r}:\n{out}"


def test_every_block_of_the_testing_guide_is_part_of_its_example_and_the_rest_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown = [(file, code) for file, code, _ in blocks("testing-servers.md") if file is not None]
    assert shown, "docs/testing-servers.md shows no part of its example files"
    for file, code in shown:
        assert file is not None
        assert code in (ROOT / file).read_text(encoding="utf-8"), (
            f"docs/testing-servers.md shows a part of {file} that is not in it:\n{code}")
    run_guide("testing-servers.md", monkeypatch)


def test_the_testing_guides_example_tests_pass_under_pytest() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "examples/testing", "-q", "-p", "no:cacheprovider",
         "-rs"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "MCPKIT_SPEC_DIR": str(SPEC_DIR)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    summary = done.stdout.strip().splitlines()[-1]
    assert re.search(r"\b\d+ passed\b", summary), summary
    # Its schema checks skip, by name, only where the official schemas are not found.
    assert "skipped" not in summary or not spec_available(), summary


FRAMEWORK_GUIDES = {
    "middleware.md": (
        "{'result': 3.0}",
        "[\"price {'item': 'pear', 'quantity': 4} by alice (modern)\"]",
        "{'result': 0.5}\ndurians are not sold here\nInvalid arguments for tool 'price'",
        "'plum'",
        "results for a\nresults for b\nrefused, retry in at most",
        "basket: 1.75\n3",
    ),
    "lifespan.md": (
        "{'result': 2}\n['pool opened for people']\n['pool opened for people', 'pool closed']",
        "{'type': 'object', 'properties': {'handle': {'type': 'string'}}, 'required': ['handle']}",
        "Ada Lovelace\nTrue\n['pool opened for people', 'begin', 'commit', 'begin', 'rollback', "
        "'pool closed']",
    ),
    "composition.md": (
        "['billing_pay', 'billing_who', 'support_open_ticket']\npaid 12.5 on invoice 7\n"
        "invoice 7 of 2026\nbilling",
        "True",
        "mount('billing', 'billing') into 'clash' collides: tool 'billing_pay' already "
        "registered here",
        "ticket opened: login",
    ),
}
"""The guides of the framework layer, and what each must print."""


@pytest.mark.parametrize("guide", sorted(FRAMEWORK_GUIDES))
def test_every_block_of_each_framework_guide_runs_and_prints_what_it_says(
    guide: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    run_guide(guide, monkeypatch)
    out = capsys.readouterr().out
    missing = [shown for shown in FRAMEWORK_GUIDES[guide] if shown not in out]
    assert not missing, f"docs/{guide} should print {missing!r}:\n{out}"


def test_every_block_of_the_openapi_guide_runs_and_prints_what_it_says(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    run_guide("openapi.md", monkeypatch)
    out = capsys.readouterr().out
    text = (DOCS / "openapi.md").read_text(encoding="utf-8")
    shown = re.findall(r"^prints\n\n```\n(.*?)^```", text, re.S | re.M)
    assert len(shown) == 2, "docs/openapi.md shows what two blocks print"
    for printed in shown:
        assert printed in out, f"docs/openapi.md should print:\n{printed}\ngot:\n{out}"
