"""The Skills extension on a client: list skills without fetching them, and load one only
after checking every byte against its entry.

`SkillsClient(client)` wraps a connected `mcpkit.Client`:
- `list()` pages `skills/list` and checks each entry; it reads no file (a host must not
  fetch a skill ahead of need). Entries that break the extension's rules are set aside in
  `rejected`, never returned.
- `get(uri)` asks `skills/get` for one entry, checked the same way.
- `load(entry)` reads the skill's `SKILL.md` and verifies it: its size, its digest, then
  its front matter field by field against the entry's. Any mismatch raises
  `SkillVerificationError` naming the skill, and nothing of the content is returned.
- `LoadedSkill.read(path)` reads one more file of a loaded skill, verified the same way; a
  file the held entry does not list is refused without a request.
- `fetch(entry, directory)` loads a skill and writes every verified file under
  `directory/<name>/`, in a temporary folder first, so a failure leaves nothing half written.

Imports `mcpkit.client`, `mcpkit.errors`, `mcpkit.protocol` and this package.
"""

from __future__ import annotations

import base64
import binascii
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from mcpkit.errors import MethodNotFoundError, ProtocolViolation, SkillVerificationError
from mcpkit.ext.skills.entries import (
    MAX_TOTAL_BYTES,
    SKILL_FILE,
    EntryError,
    SkillEntry,
    check_entry,
    digest_of,
    limit_problem,
    read_bound,
)
from mcpkit.ext.skills.frontmatter import (
    FrontMatterError,
    parse_front_matter,
    split_front_matter,
)
from mcpkit.protocol.extensions import SKILLS
from mcpkit.types.methods import Method

if TYPE_CHECKING:
    from mcpkit.client.client import Client

__all__ = [
    "LoadedSkill",
    "Rejected",
    "SkillVerificationError",
    "SkillsClient",
]

MAX_PAGES: Final = 1000
"""A listing that has not ended after this many pages is refused (a server looping)."""


@dataclass(frozen=True, slots=True)
class Rejected:
    """A listed entry that breaks the extension's rules, and why; it is never loaded."""

    uri: str | None
    reason: str


@dataclass(slots=True)
class LoadedSkill:
    """A skill whose `SKILL.md` passed every check: the entry it was held to and its text."""

    entry: SkillEntry
    text: str
    skills: SkillsClient
    files: dict[str, bytes] = field(default_factory=dict)
    """What has been read and verified so far, by URI (SKILL.md included)."""

    @property
    def body(self) -> str:
        """The instructions after the front matter."""
        split = split_front_matter(self.text)
        return self.text if split is None else split[1]

    async def read(self, path: str) -> bytes:
        """One file of the skill, by its path inside the skill (`references/FORMS.md`) or its
        URI, verified against the held entry."""
        uri = path if "://" in path else self.entry.root + "/" + path.lstrip("/")
        if uri not in self.files:
            self.files[uri] = await self.skills.read_verified(self.entry, uri)
        return self.files[uri]


class SkillsClient:
    """Skills from one server, through a `Client` (declare the extension in its options,
    `ClientOptions(extensions={SKILLS: {}})`, so the server knows this host speaks it)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.rejected: list[Rejected] = []

    async def offered(self) -> bool:
        """Whether the server offers the Skills extension in `server/discover`."""
        await self.client.connect()
        return SKILLS in self.client.server_extensions

    async def _require(self) -> None:
        if not await self.offered():
            raise MethodNotFoundError(
                f"the server does not offer the Skills extension ({SKILLS}) in "
                "server/discover, so it serves no skills", {"method": Method.SKILLS_LIST})

    async def list(self) -> list[SkillEntry]:
        """Every skill the server lists, all pages, each entry checked; reads no file."""
        await self._require()
        self.rejected = []
        entries: list[SkillEntry] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            result = await self.client.request(Method.SKILLS_LIST,
                                               {"cursor": cursor} if cursor else {})
            skills = result.get("skills")
            if not isinstance(skills, list):
                raise ProtocolViolation("skills/list answered without a skills list")
            for item in skills:
                try:
                    entries.append(check_entry(item))
                except EntryError as exc:
                    uri = item.get("uri") if isinstance(item, dict) else None
                    self.rejected.append(Rejected(uri if isinstance(uri, str) else None,
                                                  str(exc)))
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return entries
            if cursor in seen:
                break
            seen.add(cursor)
        raise ProtocolViolation("skills/list kept answering with a next page (a cursor "
                                "repeated, or over 1000 pages); the listing is refused")

    async def get(self, uri: str) -> SkillEntry:
        """The entry of the skill whose `SKILL.md` is `uri`, checked."""
        await self._require()
        result = await self.client.request(Method.SKILLS_GET, {"uri": uri})
        try:
            entry = check_entry(result.get("skill"))
        except EntryError as exc:
            raise SkillVerificationError(f"skills/get {uri}: {exc}", skill=uri, uri=uri) from None
        if entry.uri != uri:
            raise SkillVerificationError(f"skills/get {uri} answered with the entry of "
                                         f"{entry.uri}", skill=uri, uri=entry.uri)
        return entry

    async def find(self, name: str) -> SkillEntry:
        """The listed skill named `name` (or whose URI is `name`); LookupError saying which
        names there are, or that the name is ambiguous."""
        entries = await self.list()
        hits = [e for e in entries if name in (e.name, e.uri)]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            known = ", ".join(sorted(e.name for e in entries)) or "none"
            raise LookupError(f"no skill named {name!r} is listed (the skills: {known})")
        raise LookupError(f"{len(hits)} skills are named {name!r}: "
                          f"{', '.join(e.uri for e in hits)}; name one by its URI")

    async def load(self, entry: SkillEntry, *, allow_dynamic: bool = False) -> LoadedSkill:
        """Read and verify the skill's `SKILL.md` (size, digest, front matter)."""
        if entry.files is None and not allow_dynamic:
            raise SkillVerificationError(
                f"skill {entry.uri} is 'dynamic': its entry publishes no digests, so its "
                "content cannot be verified (pass allow_dynamic=True to load it anyway)",
                skill=entry.uri, uri=entry.uri)
        over = limit_problem(len(entry.files or ()), entry.total_size)
        if over is not None:
            raise SkillVerificationError(f"skill {entry.uri}: {over}", skill=entry.uri,
                                         uri=entry.uri)
        data = await self.read_verified(entry, entry.uri)
        try:
            text = data.decode("utf-8")
            front = parse_front_matter(text)
        except (UnicodeDecodeError, FrontMatterError) as exc:
            raise SkillVerificationError(f"skill {entry.uri}: its {SKILL_FILE} front matter "
                                         f"cannot be read ({exc})", skill=entry.uri,
                                         uri=entry.uri) from None
        differ = _differences(front, entry.frontmatter)
        if differ:
            raise SkillVerificationError(
                f"skill {entry.uri}: the front matter of the {SKILL_FILE} served differs from "
                f"its entry's ({'; '.join(differ)}); the skill is not loaded",
                skill=entry.uri, uri=entry.uri)
        return LoadedSkill(entry, text, self, {entry.uri: data})

    async def read_verified(self, entry: SkillEntry, uri: str) -> bytes:
        """The bytes of `uri`, a file the entry lists, once they match its size and digest."""
        listed = entry.file(uri)
        if listed is None and (entry.files is not None
                               or not uri.startswith(entry.root + "/")):
            raise SkillVerificationError(f"skill {entry.uri}: {uri} is not one of the files "
                                         "its entry lists, so it is not read",
                                         skill=entry.uri, uri=uri)
        bound = read_bound(listed.size if listed is not None else MAX_TOTAL_BYTES, uri)
        result = await self.client.read_resource(uri, fresh=True, max_bytes=bound)
        data = _bytes_of(result.raw, uri, entry.uri)
        if listed is None:
            return data  # a dynamic skill: nothing to verify against
        if len(data) != listed.size:
            raise SkillVerificationError(
                f"skill {entry.uri}: {uri} is {len(data)} bytes but its entry says "
                f"{listed.size}; the content is not used", skill=entry.uri, uri=uri)
        if digest_of(data) != listed.digest:
            raise SkillVerificationError(
                f"skill {entry.uri}: {uri} does not match its entry's digest "
                f"({listed.digest}); the content is not used", skill=entry.uri, uri=uri)
        return data

    async def fetch(self, entry: SkillEntry, directory: str | Path) -> Path:
        """Load the skill and write each of its verified files under `directory/<name>/`;
        the folder it wrote. FileExistsError when that folder is already there."""
        target = Path(directory) / entry.name
        if target.exists():
            raise FileExistsError(f"{target} already exists; remove it or choose another "
                                  "directory (nothing was written)")
        for file in entry.files or ():
            problem = _unwritable(file.uri[len(entry.root) + 1:], Path(directory))
            if problem is not None:
                raise SkillVerificationError(
                    f"skill {entry.uri}: {file.uri} cannot be written as a file: {problem}; "
                    "nothing was read or written", skill=entry.uri, uri=file.uri)
        loaded = await self.load(entry)
        for file in entry.files or ():
            await loaded.read(file.uri)
        Path(directory).mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=directory))
        try:
            for uri, data in loaded.files.items():
                relative = uri[len(entry.root) + 1:]
                path = staging.joinpath(*relative.split("/"))
                if not path.resolve().is_relative_to(staging.resolve()):
                    raise SkillVerificationError(f"skill {entry.uri}: {uri} would be written "
                                                 "outside its folder", skill=entry.uri, uri=uri)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            os.replace(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return target


def _unwritable(relative: str, directory: Path) -> str | None:
    """Why the file at `relative` (a path inside a skill, from its entry) cannot be written
    under `directory`, or None. A server names the files: a name this file system cannot
    hold fails the write half-way, and one holding controls or bidi characters would reach a
    terminal later through whatever lists the folder."""
    limit = _fs_limit(directory, "PC_NAME_MAX", 255)
    for part in relative.split("/"):
        if not part.isprintable():
            return "its name holds control, format or bidi characters"
        size = len(part.encode("utf-8", "surrogatepass"))
        if size > limit:
            return f"a name of {size} bytes ({part[:24]}...), over the {limit} this file system allows"
    size = len(str(directory.resolve() / relative).encode("utf-8", "surrogatepass"))
    path_limit = _fs_limit(directory, "PC_PATH_MAX", 4096)
    if size >= path_limit:
        return f"a path of {size} bytes, over the {path_limit} this file system allows"
    return None


def _fs_limit(directory: Path, name: str, default: int) -> int:
    """A limit of the file system `directory` is on (or would be, once made)."""
    for place in (directory, *directory.resolve().parents):
        try:
            return int(os.pathconf(place, name))
        except (OSError, ValueError, AttributeError):
            continue
    return default


def _bytes_of(result: dict[str, Any], uri: str, skill: str) -> bytes:
    contents = [c for c in result.get("contents", []) if isinstance(c, dict)]
    match = next((c for c in contents if c.get("uri") == uri), contents[0] if contents else None)
    if match is None:
        raise SkillVerificationError(f"skill {skill}: resources/read {uri} returned no content",
                                     skill=skill, uri=uri)
    if isinstance(match.get("text"), str):
        return str(match["text"]).encode("utf-8")
    if isinstance(match.get("blob"), str):
        try:
            return base64.b64decode(match["blob"], validate=True)
        except (binascii.Error, ValueError):
            pass
    raise SkillVerificationError(f"skill {skill}: resources/read {uri} returned neither text "
                                 "nor a base64 blob", skill=skill, uri=uri)


def _differences(served: dict[str, Any], held: dict[str, Any]) -> list[str]:
    """The fields on which the fetched front matter and the entry's disagree."""
    out = []
    for key in sorted(set(served) | set(held)):
        a, b = served.get(key), held.get(key)
        if not _same(a, b):
            out.append(f"{key}: served {a!r}, entry {b!r}")
    return out


def _same(a: Any, b: Any) -> bool:
    """JSON equality: 1 and 1.0 are one number, but True is not 1, nor "1" 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b
