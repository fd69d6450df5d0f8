"""The Skills extension on a server: `skills/list`, `skills/get`, the files as resources, and
`resources/directory/read`.

`Skills(server)` offers `io.modelcontextprotocol/skills` in `server/discover` (with
`directoryRead: true` unless turned off) and adds the extension's methods through the public
extension API. Each skill's files become ordinary resources (`skill://<path>/<file>`), so
`resources/read` serves them with no skill-specific code, and the `SKILL.md` resource carries
the metadata the extension asks for (`text/markdown`, the front matter's name and
description).

The methods are served to every modern request once the server offers the extension
(`add_method(..., gated=False)`): declaring it is the server's commitment to answer them, and
the official conformance suite calls them without declaring the extension itself.

Imports `mcpkit.server`, `mcpkit.protocol`, `mcpkit.errors`, `mcpkit.types` and this package.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from mcpkit.errors import InternalError, InvalidParamsError
from mcpkit.ext.skills.entries import SKILL_FILE, SkillEntry
from mcpkit.ext.skills.reads import (
    DEFAULT_READ_BUDGET_BYTES,
    LARGE_FILE_BYTES,
    ReadBudget,
    as_sent,
)
from mcpkit.ext.skills.source import (
    LocalFile,
    LocalSkill,
    SkillSourceError,
    from_files,
    scan_directory,
)
from mcpkit.protocol.cursor import decode_cursor, encode_cursor
from mcpkit.protocol.extensions import SKILLS
from mcpkit.server.context import Context
from mcpkit.server.server import Server
from mcpkit.types.methods import Method

__all__ = [
    "DIRECTORY_MIME_TYPE",
    "SkillSourceError",
    "Skills",
    "serve_skills",
]

DIRECTORY_MIME_TYPE: Final = "inode/directory"
log = logging.getLogger("mcpkit.ext.skills")


class Skills:
    """The skills one server serves. Add them with `add_directory` or `add`."""

    def __init__(self, server: Server, *, directory_read: bool = True,
                 read_budget_bytes: int = DEFAULT_READ_BUDGET_BYTES) -> None:
        self.server = server
        self.directory_read = directory_read
        self.read_budget = ReadBudget(read_budget_bytes)
        """Bytes of large files (`LARGE_FILE_BYTES` and more) sent at once (`reads.py`)."""
        self._skills: dict[str, LocalSkill] = {}
        self._served: set[str] = set()
        self._dirs: dict[str, dict[str, bool]] = {}
        """Directory URI -> its children's URIs, True for a subdirectory."""
        self._generation = 0
        self._listed: list[dict[str, Any]] | None = None
        """Every entry as sent, built once per change (a listing's pages slice it)."""
        server.extension(SKILLS, {"directoryRead": True} if directory_read else {})
        server.add_method(Method.SKILLS_LIST, self._list, extension=SKILLS, gated=False)
        server.add_method(Method.SKILLS_GET, self._get, extension=SKILLS, gated=False)
        if directory_read:
            server.add_method(Method.RESOURCES_DIRECTORY_READ, self._read_directory,
                              extension=SKILLS, gated=False)

    @property
    def entries(self) -> list[SkillEntry]:
        """Every skill's entry, ordered by URI."""
        return [self._skills[uri].entry for uri in sorted(self._skills)]

    def add_directory(self, directory: str | Path) -> list[SkillEntry]:
        """Serve every skill under `directory` (folders holding a `SKILL.md`, at any depth);
        SkillSourceError naming the first that cannot be served, and then none is added."""
        found = scan_directory(Path(directory))
        self._check_new(found)
        for skill in found:
            self._register(skill)
        return [skill.entry for skill in found]

    def add(self, path: str, files: Mapping[str, str | bytes]) -> SkillEntry:
        """Serve a skill written in code at `skill://<path>/`: `files` maps each path inside
        it (`SKILL.md` required) to its text or bytes."""
        skill = from_files(path, files)
        self._check_new([skill])
        self._register(skill)
        return skill.entry

    # -- registering ---------------------------------------------------------------------

    def _check_new(self, skills: list[LocalSkill]) -> None:
        for skill in skills:
            if skill.entry.uri in self._skills:
                raise SkillSourceError(f"skill {skill.entry.uri} is already served")
            for uri in skill.files:
                if uri in self.server.resources and uri not in self._served:
                    raise SkillSourceError(f"skill {skill.entry.uri}: the resource {uri} is "
                                           "already registered by something else")

    def _register(self, skill: LocalSkill) -> None:
        self._skills[skill.entry.uri] = skill
        for uri, file in skill.files.items():
            if uri not in self._served:
                self._serve_file(skill, uri, file)
            self._link(uri, is_dir=False)
        self._generation += 1
        self._listed = None

    def _serve_file(self, skill: LocalSkill, uri: str, file: LocalFile) -> None:
        manifest = file.relative == SKILL_FILE
        front = skill.entry.frontmatter

        def contents() -> str | bytes:
            try:
                data = file.read(uri)
            except SkillSourceError as exc:
                log.error("%s", exc)
                raise InternalError(f"the skill file {uri} cannot be served as its entry "
                                    "describes it (see the server's log)", {"uri": uri}) from None
            return as_sent(data, file.mime_type.startswith("text/") or manifest)

        async def large_contents() -> str | bytes:
            await self.read_budget.take(file.size, uri)  # held until this request's task ends
            return await asyncio.to_thread(contents)

        self.server.add_resource(
            uri, large_contents if file.size >= LARGE_FILE_BYTES else contents,
            name=str(front["name"]) if manifest else file.relative.rpartition("/")[2],
            description=str(front["description"]) if manifest else "",
            mime_type=file.mime_type, size=file.size,
        )
        self._served.add(uri)

    def _link(self, uri: str, *, is_dir: bool) -> None:
        """Record `uri` as a child of its directory, and each directory up to the scheme's."""
        scheme, _, path = uri.partition("://")
        parent, _, _ = path.rpartition("/")
        if not parent:
            return
        parent_uri = f"{scheme}://{parent}"
        children = self._dirs.setdefault(parent_uri, {})
        new_parent = not children
        children[uri] = is_dir
        if new_parent:
            self._link(parent_uri, is_dir=True)

    # -- the methods ---------------------------------------------------------------------

    def _page(self, method: str, params: dict[str, Any], items: list[Any]
              ) -> tuple[list[Any], str | None]:
        cursor = params.get("cursor")
        offset = 0 if cursor is None else decode_cursor(method, cursor, self._generation)
        size = self.server.options.page_size
        more = offset + size < len(items)
        return items[offset: offset + size], (
            encode_cursor(offset + size, self._generation) if more else None)

    async def _list(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        if self._listed is None:
            self._listed = [e.wire() for e in self.entries]
        chunk, cursor = self._page(Method.SKILLS_LIST, params, self._listed)
        result: dict[str, Any] = {"resultType": "complete", "skills": chunk}
        if cursor is not None:
            result["nextCursor"] = cursor
        return self.server.options.list_cache.apply(result)

    async def _get(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        uri = params.get("uri")
        if type(uri) is not str:
            raise InvalidParamsError("skills/get: params.uri must be the URI of a skill's "
                                     "SKILL.md (a string)")
        skill = self._skills.get(uri)
        if skill is None:
            raise InvalidParamsError(f"skills/get: no skill is served at {uri}"
                                     + _near(uri, self._skills), {"uri": uri})
        result = {"resultType": "complete", "skill": skill.entry.wire()}
        return self.server.options.read_cache.apply(result)

    async def _read_directory(self, params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        method = Method.RESOURCES_DIRECTORY_READ
        uri = params.get("uri")
        if type(uri) is not str:
            raise InvalidParamsError(f"{method}: params.uri must be a directory's URI (a "
                                     "string)")
        children = self._dirs.get(uri.rstrip("/") if uri.endswith("/") else uri)
        if children is None:
            what = ("is not a directory resource" if uri in self._served
                    else "is no directory this server serves")
            raise InvalidParamsError(f"{method}: {uri} {what}", {"uri": uri})
        items = [
            {"uri": child, "name": child.rpartition("/")[2], "mimeType": DIRECTORY_MIME_TYPE}
            if is_dir else dict(self.server.resources[child].definition)
            for child, is_dir in sorted(children.items())
        ]
        chunk, cursor = self._page(method, params, items)
        result: dict[str, Any] = {"resultType": "complete", "resources": chunk}
        if cursor is not None:
            result["nextCursor"] = cursor
        return result


def _near(uri: str, skills: Mapping[str, LocalSkill]) -> str:
    """A hint for a `skills/get` that missed: the skill of that name, if one is served."""
    name = uri.rstrip("/").rpartition("/")[2]
    if name == SKILL_FILE:
        name = uri.rstrip("/").rsplit("/", 2)[-2]
    same = [u for u, s in skills.items() if s.entry.name == name]
    return f" (did you mean {same[0]}?)" if same else ""


def serve_skills(server: Server, directory: str | Path, *, directory_read: bool = True,
                 read_budget_bytes: int = DEFAULT_READ_BUDGET_BYTES) -> Skills:
    """Offer the Skills extension on `server` and serve every skill under `directory`."""
    skills = Skills(server, directory_read=directory_read, read_budget_bytes=read_budget_bytes)
    skills.add_directory(directory)
    return skills
