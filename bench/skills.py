#!/usr/bin/env python3
"""What the Skills extension costs: adding a directory, the methods, and verifying a load.

    python bench/skills.py [--skills 200] [--files 20] [--n 500]

A directory of `--skills` skills of `--files` files each (2 KiB of text apiece) is written to
a temporary folder, then:
- adding it (walking, reading, hashing every file, parsing every front matter), in ms;
- `skills/list` of one page (`page_size` 100) and `skills/get` of one skill, each straight
  into `Server.handle` (no transport), in µs;
- a client's `load` plus reading every file of one skill, verified, over the in-memory
  transport, in ms.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from mcpkit import Server
from mcpkit.client import Client, ClientOptions
from mcpkit.ext.skills import SKILLS, SkillsClient, serve_skills
from mcpkit.protocol.codec import Request
from mcpkit.transports.memory import InMemory
from mcpkit.types.constants import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY

META = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {"extensions": {SKILLS: {}}}}


def write_tree(root: Path, skills: int, files: int) -> None:
    for s in range(skills):
        folder = root / f"skill-{s}"
        (folder / "references").mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{s}\ndescription: Benchmark skill {s}\nmetadata:\n"
            f"  version: \"1.{s}\"\n---\n" + "Instructions.\n" * 100)
        for f in range(files - 1):
            (folder / "references" / f"ref-{f}.md").write_text("x" * 2047 + "\n")


async def per_call(server: Server, method: str, params: dict[str, Any], n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        reply = await server.handle(Request(i, method, {**params, "_meta": META}))
        assert "result" in reply, reply
    return (time.perf_counter() - start) / n * 1e6


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skills", type=int, default=200)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--n", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        write_tree(Path(tmp), args.skills, args.files)
        server = Server("bench-skills")
        start = time.perf_counter()
        serve_skills(server, tmp)
        added_ms = (time.perf_counter() - start) * 1e3
        list_us = await per_call(server, "skills/list", {}, args.n)
        get_us = await per_call(server, "skills/get", {"uri": "skill://skill-7/SKILL.md"}, args.n)
        async with Client(InMemory(server), options=ClientOptions(extensions={SKILLS: {}})) as c:
            skills = SkillsClient(c)
            entry = await skills.get("skill://skill-7/SKILL.md")
            rounds = max(1, args.n // 50)
            start = time.perf_counter()
            for _ in range(rounds):
                loaded = await skills.load(entry)
                for file in entry.files or ():
                    await loaded.read(file.uri)
            load_ms = (time.perf_counter() - start) / rounds * 1e3
    total = args.skills * args.files
    print(f"add {args.skills} skills x {args.files} files ({total} files): {added_ms:.0f} ms")
    print(f"skills/list (one page of 100 entries): {list_us:.0f} µs")
    print(f"skills/get: {get_us:.0f} µs")
    print(f"load + verify one skill of {args.files} files in memory: {load_ms:.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())
