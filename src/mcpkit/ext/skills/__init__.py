"""Skills (SEP-2640, `io.modelcontextprotocol/skills`) on both sides.

Server: `Skills(server)` offers the extension and serves skills added from a directory of
`SKILL.md` folders (`add_directory`) or from code (`add`); `serve_skills(server, directory)`
does both at once. Client: `SkillsClient(client)` lists skills without fetching them and
loads one only after its files match the entry's digests, sizes and front matter.

See docs/skills.md.
"""

from mcpkit.errors import SkillVerificationError
from mcpkit.ext.skills.entries import (
    DYNAMIC,
    MAX_FILES,
    MAX_TOTAL_BYTES,
    EntryError,
    SkillEntry,
    SkillFile,
    digest_of,
)
from mcpkit.ext.skills.frontmatter import FrontMatterError, parse_front_matter
from mcpkit.ext.skills.host import LoadedSkill, Rejected, SkillsClient
from mcpkit.ext.skills.serving import Skills, serve_skills
from mcpkit.ext.skills.source import SkillSourceError
from mcpkit.protocol.extensions import SKILLS

__all__ = [
    "DYNAMIC",
    "MAX_FILES",
    "MAX_TOTAL_BYTES",
    "SKILLS",
    "EntryError",
    "FrontMatterError",
    "LoadedSkill",
    "Rejected",
    "SkillEntry",
    "SkillFile",
    "SkillSourceError",
    "SkillVerificationError",
    "Skills",
    "SkillsClient",
    "digest_of",
    "parse_front_matter",
    "serve_skills",
]
