"""Skill files near the extension's 16 MiB limit, served by real `mcpkit run --skills`
processes (over HTTP under uvicorn, and over stdio) and loaded by mcpkit's own client.

A file is one `resources/read` answer (the extension has no ranges or parts), so a 15 MiB
file is a message of about 20 MiB: past the client's own message limits (16 MiB over HTTP,
4 MiB on stdio), which refused it. The client now lets a skill file's read be as large as its
entry's size allows (`entries.read_bound`), the server keeps each answer within that bound
(text whose JSON escapes would outgrow base64 goes as a blob), and six concurrent reads of a
large file cost the server's process (its peak RSS, from /proc/PID/status) no more than one
read and a margin, where they added 230 MiB: large files are sent within a byte budget. Every
message either side sends is checked against the official schema.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import httpx
import orjson
import pytest
from helpers.client.schema_tap import SchemaTap, TappedConnector
from helpers.transports.http_peer import Peer, ServerProcess

from mcpkit.client import Client, ClientOptions
from mcpkit.errors import InternalError
from mcpkit.ext.skills import SKILLS, SkillsClient
from mcpkit.ext.skills.entries import read_bound
from mcpkit.ext.skills.reads import ReadBudget, as_sent
from mcpkit.transports.http_client.transport import HTTPConnector
from mcpkit.transports.stdio.client import StdioServer

MIB = 1024 * 1024
BIG = 15 * MIB
BLOB = "skill://big-blob/data/big.bin"
TEXT = "skill://big-text/notes.txt"


def large_skills(root: Path) -> Path:
    """Two skills at 15 MiB: random bytes, and text that JSON would spell twice as long."""
    for name, path, data in (("big-blob", "data/big.bin", os.urandom(BIG)),
                             ("big-text", "notes.txt", b'"\\' * (BIG // 2))):
        folder = root / name
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Large\n---\nBig.\n")
        (folder / path).write_bytes(data)
    return root


def peak_rss_mib(pid: int) -> float:
    """The process's peak resident set (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmHWM for process {pid}")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return large_skills(tmp_path_factory.mktemp("large-skills"))


async def load_both(connector: object, tap: SchemaTap) -> None:
    client = Client(TappedConnector(connector, tap),
                    options=ClientOptions(extensions={SKILLS: {}}, timeout=120))
    async with client:
        skills = SkillsClient(client)
        for name, uri in (("big-blob", BLOB), ("big-text", TEXT)):
            loaded = await skills.load(await skills.find(name))
            data = await loaded.read(uri)
            assert len(data) == BIG  # verified against its size and digest
    tap.assert_clean()


async def test_a_15_mib_skill_file_loads_over_http(served: Path) -> None:
    server = ServerProcess.start(f"--skills={served}")
    try:
        await load_both(HTTPConnector(server.url), SchemaTap())
    finally:
        server.stop()


async def test_a_15_mib_skill_file_loads_over_stdio(served: Path) -> None:
    stdio = StdioServer([sys.executable, "-m", "mcpkit", "run", "--skills", str(served)],
                        stderr="capture")
    await load_both(stdio, SchemaTap())


async def test_six_concurrent_reads_of_a_large_file_cost_the_server_about_one(
        served: Path) -> None:
    server = ServerProcess.start(f"--skills={served}")
    limit = read_bound(BIG, BLOB)
    try:
        async with httpx.AsyncClient(timeout=120) as http:
            async def read() -> int:
                peer = Peer(server.url, http)
                reply = await peer.post(peer.request_message("resources/read", {"uri": BLOB}))
                assert reply.status == 200 and len(reply.body) <= limit
                return len(reply.message["result"]["contents"][0]["blob"])

            await read()
            alone = peak_rss_mib(server.proc.pid)
            sizes = await asyncio.gather(*(read() for _ in range(6)))  # unauthenticated
            six = peak_rss_mib(server.proc.pid)
            await asyncio.gather(*(read() for _ in range(18)))
            eighteen = peak_rss_mib(server.proc.pid)
    finally:
        server.stop()
    assert sizes == [4 * -(-BIG // 3)] * 6
    # One read holds about 75 MiB (the file, its base64, the encoded answer). Without the
    # budget six at once raised the peak by about 150 MiB and each six more by about 150
    # more (+300 from six to eighteen): every reader held its own. Within it reads take
    # turns, one overlapping the next at most while its answer leaves: 20 to 100 MiB past six
    # on a quiet machine, 180 once under a load of 19, where the allocator keeps more of what
    # the freed reads held. Three reads' worth stays clear of both.
    assert six - alone < 100, f"six concurrent reads raised the peak by {six - alone:.0f} MiB"
    assert eighteen - six < 225, f"eighteen raised it {eighteen - six:.0f} MiB more than six"


async def test_a_read_past_the_budget_waits_its_turn_and_is_refused_after_wait_s() -> None:
    budget = ReadBudget(limit=10, wait_s=0.05)
    holding, release = asyncio.Event(), asyncio.Event()

    async def first() -> None:
        await budget.take(10, "skill://a/SKILL.md")
        holding.set()
        await release.wait()  # its share is given back when its task ends

    task = asyncio.create_task(first())
    await holding.wait()
    with pytest.raises(InternalError, match=r"sending other large skill files \(up to 10 "
                       r"bytes at once\); try again shortly"):
        await asyncio.create_task(budget.take(5, "skill://b/SKILL.md"))
    release.set()
    await task
    second = asyncio.create_task(budget.take(15, "skill://c/SKILL.md"))  # alone, it may be over
    await asyncio.wait_for(second, 10)
    assert budget.used == 0  # its task ended too


def test_text_whose_json_outgrows_base64_is_sent_as_its_bytes() -> None:
    plain, escaped = b"a" * MIB, b'"\\' * MIB
    assert as_sent(plain, text=True) == plain.decode()
    assert as_sent(escaped, text=True) == escaped
    assert as_sent(b"\xff" * 10, text=True) == b"\xff" * 10  # not UTF-8: bytes
    for data in (plain, escaped):
        sent = as_sent(data, text=True)
        size = len(orjson.dumps(sent)) if isinstance(sent, str) else 4 * -(-len(data) // 3)
        assert size <= read_bound(len(data), TEXT)
