"""Skill entries as data: URIs, names, digests, the limits, and checking an entry received.

A skill entry (`skills/list`, `skills/get`) is `{uri, frontmatter, resources}`: the URI of its
`SKILL.md`, that file's front matter as JSON, and either every file of the skill as
`{uri, digest, size}` or the string "dynamic". Both sides speak this shape: a server builds
entries from what it loaded, a client checks each one it receives before it trusts it for
anything (an invalid entry is never loaded). The rules written here are the extension's:
`skill://<skill-path>/<file-path>` URIs whose last skill-path segment is the skill's name,
Agent Skills naming, `sha256:<64 lowercase hex>` digests of the raw bytes, and at most 512
files and 16 MiB per skill.

Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcpkit.errors import EntryError

__all__ = [
    "DYNAMIC",
    "MAX_FILES",
    "MAX_TOTAL_BYTES",
    "SCHEME",
    "SKILL_FILE",
    "EntryError",
    "SkillEntry",
    "SkillFile",
    "check_entry",
    "check_name",
    "digest_of",
    "limit_problem",
    "name_of",
    "read_bound",
    "root_of",
    "skill_uri",
]

SCHEME: Final = "skill://"
SKILL_FILE: Final = "SKILL.md"
DYNAMIC: Final = "dynamic"
MAX_FILES: Final = 512
"""Files per skill, SKILL.md included, that every host must accept and no server should pass."""
MAX_TOTAL_BYTES: Final = 16 * 1024 * 1024
"""The sum of a skill's file sizes that every host must accept (16 MiB)."""

_ENVELOPE_BYTES: Final = 64 * 1024
"""What a `resources/read` answer carries besides a file's content: the JSON-RPC envelope,
the resource's metadata and `_meta`, with room to spare."""


def read_bound(size: int, uri: str) -> int:
    """The most bytes a server's answer to `resources/read` of a skill file of `size` bytes
    at `uri` may take: the content as base64 (a server sends text whose JSON escapes would
    take more as a blob), the URI escaped at worst, and the envelope. A host accepts an
    answer that large for that one read, so a file within the extension's 16 MiB limit is
    never refused for its size (other messages keep the transport's own limit)."""
    return 4 * -(-size // 3) + 6 * len(uri) + _ENVELOPE_BYTES


_NAME: Final = re.compile(r"(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
_DIGEST: Final = re.compile(r"sha256:[0-9a-f]{64}")
_SEGMENT: Final = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=@-]+")


def digest_of(data: bytes) -> str:
    """The extension's digest of a file's raw bytes: `sha256:` and 64 lowercase hex digits."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def check_name(name: object, where: str) -> str:
    """`name` if it follows the Agent Skills naming rules, else ValueError saying which."""
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise ValueError(
            f"{where}: the skill name {name!r} must be 1-64 lowercase letters, digits and "
            "hyphens, neither starting nor ending with a hyphen, with no '--'"
        )
    return name


def skill_uri(path: str) -> str:
    """The `SKILL.md` URI of the skill at `path` (`acme/billing/refunds`), path checked."""
    segments = path.split("/")
    bad = [s for s in segments if not _SEGMENT.fullmatch(s) or s in (".", "..")]
    if not path or bad:
        raise ValueError(
            f"skill path {path!r}: each '/'-separated segment must be a non-empty URI segment "
            "(letters, digits, '-', '.', '_', '~'; not '.' or '..')"
        )
    return f"{SCHEME}{path}/{SKILL_FILE}"


def root_of(uri: str) -> str | None:
    """The skill's root directory URI for its `SKILL.md` URI, or None for another URI."""
    suffix = "/" + SKILL_FILE
    if not uri.endswith(suffix) or "://" not in uri:
        return None
    root = uri[: -len(suffix)]
    return root if root.partition("://")[2] else None


def name_of(uri: str) -> str | None:
    """The skill name a `SKILL.md` URI carries (its last skill-path segment)."""
    root = root_of(uri)
    return None if root is None else root.rpartition("/")[2].rpartition("://")[2]


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill as its entry lists it."""

    uri: str
    digest: str
    size: int

    def wire(self) -> dict[str, Any]:
        return {"uri": self.uri, "digest": self.digest, "size": self.size}


@dataclass(frozen=True, slots=True)
class SkillEntry:
    """A checked skill entry: what a host may build its registry from."""

    uri: str
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...] | None
    """Every file of the skill, SKILL.md first; None for a "dynamic" skill."""

    @property
    def name(self) -> str:
        return str(self.frontmatter["name"])

    @property
    def description(self) -> str:
        return str(self.frontmatter["description"])

    @property
    def root(self) -> str:
        root = root_of(self.uri)
        assert root is not None  # checked when the entry was
        return root

    @property
    def total_size(self) -> int:
        return sum(f.size for f in self.files or ())

    def file(self, uri: str) -> SkillFile | None:
        return next((f for f in self.files or () if f.uri == uri), None)

    def wire(self) -> dict[str, Any]:
        files: Any = DYNAMIC if self.files is None else [f.wire() for f in self.files]
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": files}


def limit_problem(count: int, total: int) -> str | None:
    """What is over the extension's per-skill limits, or None."""
    if count > MAX_FILES:
        return f"it has {count} files, over the limit of {MAX_FILES} (SKILL.md included)"
    if total > MAX_TOTAL_BYTES:
        return f"its files total {total} bytes, over the limit of {MAX_TOTAL_BYTES} (16 MiB)"
    return None


def check_entry(data: object) -> SkillEntry:
    """The entry a server sent, checked; EntryError naming the skill and the rule broken."""
    if not isinstance(data, Mapping):
        raise EntryError(f"a skill entry is an object, not {type(data).__name__}")
    uri = data.get("uri")
    if not isinstance(uri, str) or not uri:
        raise EntryError("a skill entry has no uri")
    front = data.get("frontmatter")
    if not isinstance(front, Mapping):
        raise EntryError(f"skill {uri}: frontmatter is missing or not an object")
    for field in ("name", "description"):
        if not isinstance(front.get(field), str) or not front[field]:
            raise EntryError(f"skill {uri}: frontmatter.{field} is missing or empty")
    name = name_of(uri)
    if name is None:
        raise EntryError(f"skill {uri}: its uri does not end in /{SKILL_FILE}")
    if name != front["name"]:
        raise EntryError(f"skill {uri}: the uri names {name!r} but frontmatter.name is "
                         f"{front['name']!r}")
    resources = data.get("resources")
    if resources == DYNAMIC:
        return SkillEntry(uri, dict(front), None)
    if not isinstance(resources, list):
        raise EntryError(f"skill {uri}: resources is neither a list of files nor "
                         f"{DYNAMIC!r}")
    root = uri[: -len(SKILL_FILE)]
    files: list[SkillFile] = []
    seen: set[str] = set()
    for item in resources:
        files.append(_file(uri, root, item))
        if files[-1].uri in seen:
            raise EntryError(f"skill {uri}: {files[-1].uri} is listed twice")
        seen.add(files[-1].uri)
    if uri not in seen:
        raise EntryError(f"skill {uri}: resources does not list its own {SKILL_FILE}")
    over = limit_problem(len(files), sum(f.size for f in files))
    if over is not None:
        raise EntryError(f"skill {uri}: {over}")
    files.sort(key=lambda f: (f.uri != uri, f.uri))
    return SkillEntry(uri, dict(front), tuple(files))


def _file(skill: str, root: str, item: object) -> SkillFile:
    if not isinstance(item, Mapping):
        raise EntryError(f"skill {skill}: a resources item is not an object")
    uri, digest, size = item.get("uri"), item.get("digest"), item.get("size")
    if not isinstance(uri, str) or not uri.startswith(root) or len(uri) == len(root):
        raise EntryError(f"skill {skill}: the file {uri!r} is outside the skill's directory")
    inside = uri[len(root):].split("/")
    if any(part in ("", ".", "..") for part in inside):
        raise EntryError(f"skill {skill}: the file {uri!r} has an empty, '.' or '..' segment")
    if not isinstance(digest, str) or _DIGEST.fullmatch(digest) is None:
        raise EntryError(f"skill {skill}: {uri} has digest {digest!r}, not sha256:<64 "
                         "lowercase hex digits>")
    if type(size) is not int or size < 0:
        raise EntryError(f"skill {skill}: {uri} has size {size!r}, not a byte count")
    return SkillFile(uri, digest, size)
