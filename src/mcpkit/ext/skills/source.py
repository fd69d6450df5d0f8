"""Where a server's skills come from: a directory of `SKILL.md` folders, or code.

A directory is walked once, when it is added: every folder holding a `SKILL.md` is a skill
(nested ones too, each published on its own and also part of the skill around it), and every
file under a skill's folder is one of its files. What the walk refuses, it refuses by name
before anything is served, since a client would refuse it later anyway and say less:
- a `SKILL.md` whose front matter cannot be read, lacks `name` or `description`, or names
  another skill than its folder (the extension makes the folder name the skill's name);
- a skill over the limits (512 files, 16 MiB);
- a symbolic link that leads out of the skill's folder, or a path segment no URI can carry.
Names starting with `.` (`.git`, `.DS_Store`) are not part of a skill.

A file's digest and size are taken when it is added. A read goes back to the disk, resolves
the path again (a link changed since is refused like one that escaped from the start) and
serves the bytes only when they still match the digest the entry published: a skill edited
under a running server is an error naming the file, never content its entry does not cover.

Imports `mcpkit.ext.skills` and the standard library.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mcpkit.errors import SkillSourceError
from mcpkit.ext.skills.entries import (
    SKILL_FILE,
    SkillEntry,
    SkillFile,
    check_name,
    digest_of,
    limit_problem,
    skill_uri,
)
from mcpkit.ext.skills.frontmatter import FrontMatterError, parse_front_matter

__all__ = [
    "LocalFile",
    "LocalSkill",
    "SkillSourceError",
    "from_files",
    "scan_directory",
]


@dataclass(slots=True)
class LocalFile:
    """One file a server serves for a skill: on disk (`path`) or in memory (`data`)."""

    relative: str
    """Its path inside the skill's folder, `/`-separated (`references/FORMS.md`)."""
    digest: str
    size: int
    mime_type: str
    path: Path | None = None
    confine: Path | None = None
    """The resolved folder the file must stay inside when it is read again."""
    data: bytes | None = None

    def read(self, uri: str) -> bytes:
        """The file's bytes, the same the entry's digest covers; SkillSourceError if not."""
        if self.data is not None:
            return self.data
        assert self.path is not None and self.confine is not None
        real = self.path.resolve()
        if not real.is_relative_to(self.confine):
            raise SkillSourceError(f"{uri}: {self.path} now leads outside its skill's folder")
        try:
            data = real.read_bytes()
        except OSError as exc:
            raise SkillSourceError(f"{uri}: {self.path} cannot be read ({exc.strerror})") from None
        if len(data) != self.size or digest_of(data) != self.digest:
            raise SkillSourceError(
                f"{uri}: {self.path} changed on disk after the server published its digest; "
                "restart the server (or add the skills again) to publish the new content"
            )
        return data


@dataclass(slots=True)
class LocalSkill:
    """A skill ready to serve: its entry and the files behind it, by URI."""

    path: str
    entry: SkillEntry
    files: dict[str, LocalFile] = field(default_factory=dict)


def mime_type_of(relative: str) -> str:
    if relative.rpartition("/")[2] == SKILL_FILE or relative.endswith(".md"):
        return "text/markdown"
    guessed, _ = mimetypes.guess_type(relative, strict=False)
    return guessed or "application/octet-stream"


def from_files(path: str, files: Mapping[str, str | bytes]) -> LocalSkill:
    """A skill written in code: `files` maps each path inside the skill (`SKILL.md` required)
    to its text (sent as UTF-8) or bytes."""
    uri = skill_uri(path)
    if SKILL_FILE not in files:
        raise SkillSourceError(f"skill {path!r}: the files include no {SKILL_FILE}")
    local: list[LocalFile] = []
    for relative, content in files.items():
        data = content.encode() if isinstance(content, str) else content
        if not isinstance(data, bytes | bytearray):
            raise SkillSourceError(f"skill {path!r}: {relative!r} is {type(content).__name__},"
                                   " not text or bytes")
        _check_relative(path, relative)
        local.append(LocalFile(relative, digest_of(bytes(data)), len(data),
                               mime_type_of(relative), data=bytes(data)))
    return _build(path, uri, local, files_origin=f"skill {path!r}")


def scan_directory(root: Path) -> list[LocalSkill]:
    """Every skill under `root`, sorted by path; SkillSourceError for the first one that
    cannot be served."""
    if not root.is_dir():
        raise SkillSourceError(f"{root}: not a directory of skills (folders holding a "
                               f"{SKILL_FILE})")
    base = root.resolve()
    skills: list[LocalSkill] = []
    for folder in sorted(_skill_folders(base, base)):
        rel = folder.relative_to(base).as_posix()
        if rel == ".":
            raise SkillSourceError(f"{root}: the directory itself holds a {SKILL_FILE}; put "
                                   "each skill in a folder named after it")
        files = [_disk_file(folder, path) for path in _files_of(folder, folder)]
        skills.append(_build(rel, skill_uri(rel), files, files_origin=str(folder)))
    return skills


def _skill_folders(folder: Path, base: Path) -> list[Path]:
    found = [folder] if (folder / SKILL_FILE).is_file() else []
    for child in sorted(folder.iterdir()):
        if child.name.startswith(".") or not child.is_dir():
            continue
        real = child.resolve()
        if not real.is_relative_to(base) or real == folder or folder.is_relative_to(real):
            continue  # a link out of the tree, or back up it: no skill is found through it
        found += _skill_folders(child, base)
    return found


def _files_of(folder: Path, confine: Path, depth: int = 0) -> list[Path]:
    if depth > 32:
        raise SkillSourceError(f"{folder}: folders nested over 32 deep (a link loop?)")
    out: list[Path] = []
    for child in sorted(folder.iterdir()):
        if child.name.startswith("."):
            continue
        real = child.resolve()
        if not real.is_relative_to(confine):
            raise SkillSourceError(
                f"{child}: a symbolic link to {real}, outside the skill's folder {confine}; "
                "a skill serves only its own files (copy the file in, or remove the link)")
        if real.is_dir():
            out += _files_of(child, confine, depth + 1)
        elif real.is_file():
            out.append(child)
    return out


def _disk_file(folder: Path, path: Path) -> LocalFile:
    relative = path.relative_to(folder).as_posix()
    _check_relative(str(folder), relative)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SkillSourceError(f"{path}: cannot be read ({exc.strerror})") from None
    return LocalFile(relative, digest_of(data), len(data), mime_type_of(relative),
                     path=path, confine=folder.resolve())


def _check_relative(skill: str, relative: str) -> None:
    parts = relative.split("/")
    if any(part in ("", ".", "..") or "\\" in part for part in parts) or relative != relative.strip():
        raise SkillSourceError(f"skill {skill!r}: the file path {relative!r} must stay inside the "
                               "skill ('/'-separated, no empty, '.' or '..' segments)")
    bad = [p for p in parts if any(c in p for c in "#?%") or not p.isprintable() or " " in p]
    if bad:
        raise SkillSourceError(f"skill {skill!r}: the file path {relative!r} holds characters a "
                               "skill:// URI cannot carry unescaped (space, #, ?, %); rename it")


def _build(path: str, uri: str, files: list[LocalFile], *, files_origin: str) -> LocalSkill:
    name = path.rpartition("/")[2]
    check_name(name, f"skill folder {files_origin}")
    manifest = next(f for f in files if f.relative == SKILL_FILE)
    text_bytes = manifest.data if manifest.data is not None else manifest.read(uri)
    try:
        front = parse_front_matter(text_bytes.decode("utf-8"))
    except UnicodeDecodeError:
        raise SkillSourceError(f"{files_origin}/{SKILL_FILE}: not UTF-8 text") from None
    except FrontMatterError as exc:
        raise SkillSourceError(f"{files_origin}/{SKILL_FILE}: {exc}") from None
    for key in ("name", "description"):
        if not isinstance(front.get(key), str) or not front[key].strip():
            raise SkillSourceError(f"{files_origin}/{SKILL_FILE}: the front matter needs a "
                                   f"non-empty {key!r} (Agent Skills requires name and "
                                   "description)")
    if front["name"] != name:
        raise SkillSourceError(
            f"{files_origin}/{SKILL_FILE}: its name is {front['name']!r} but the folder is "
            f"{name!r}; the skill's name and its folder's must be the same")
    over = limit_problem(len(files), sum(f.size for f in files))
    if over is not None:
        raise SkillSourceError(f"skill {uri}: {over}; split it into smaller skills")
    root = uri[: -len(SKILL_FILE)]
    by_uri = {root + f.relative: f for f in files}
    listed = sorted(by_uri, key=lambda u: (u != uri, u))
    entry = SkillEntry(uri, front, tuple(SkillFile(u, by_uri[u].digest, by_uri[u].size)
                                         for u in listed))
    return LocalSkill(path, entry, by_uri)
