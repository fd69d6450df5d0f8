"""The conformance client's behaviour for the Skills extension's client scenarios (not scored
by the suite, required by scripts/conformance at 2026-07-28).

`client.py` hands every scenario named in `SKILL_SCENARIOS` to it. Each connects declaring
`io.modelcontextprotocol/skills`, lists the skills (which reads no file) and, but for
`sep-2640-client-no-prefetch`, loads the first one as a host does when its model asks for it:
`SkillsClient.load` reads the `SKILL.md` and checks its size, digest and front matter against
the entry. The three tampered servers of `-verify-digest`, `-verify-size` and
`-verify-frontmatter` must be refused there (the run then ends with the refusal on stderr and a
non-zero status, which those scenarios allow); a skill that passed would have every other file
read, so a missed refusal shows as a read the scenario counts against the client.

Imports: `mcpkit`'s public client API and `mcpkit.ext.skills`.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable

from mcpkit import Client, ClientOptions, HTTPConnector
from mcpkit.ext.skills import SKILLS, SkillsClient, SkillVerificationError

__all__ = ["SKILL_SCENARIOS"]


def _client(url: str) -> Client:
    return Client(HTTPConnector(url),
                  client_info={"name": "mcpkit-conformance-client", "version": "1.0.0"},
                  options=ClientOptions(era="auto", timeout=60.0, extensions={SKILLS: {}}))


async def list_only(url: str) -> None:
    async with _client(url) as client:
        entries = await SkillsClient(client).list()
        print(f"listed {len(entries)} skill(s), read none", file=sys.stderr)


async def list_then_load(url: str) -> None:
    async with _client(url) as client:
        skills = SkillsClient(client)
        entries = await skills.list()
        if not entries:
            raise SystemExit("skills/list returned no usable entry to load")
        try:
            loaded = await skills.load(entries[0])
        except SkillVerificationError as exc:
            raise SystemExit(f"refused: {exc}") from None
        for file in entries[0].files or ():
            await loaded.read(file.uri)


SKILL_SCENARIOS: dict[str, Callable[[str], Awaitable[None]]] = {
    "sep-2640-client-no-prefetch": list_only,
    "sep-2640-client-verify-digest": list_then_load,
    "sep-2640-client-verify-size": list_then_load,
    "sep-2640-client-verify-frontmatter": list_then_load,
}
