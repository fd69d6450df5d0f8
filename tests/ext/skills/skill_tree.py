"""Skill folders written into a test's tmp_path: the fixture skills the Skills tests serve."""

from __future__ import annotations

from pathlib import Path

PDF_SKILL = """---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
license: Apache-2.0
metadata:
  version: "2.1.0"
  reviewed: yes
---

# PDF processing

Pick a form from `references/`, then run `scripts/extract.py`.
"""

REFUNDS_SKILL = """---
name: refunds
description: >-
  Process customer refund requests
  per company policy
allowed-tools: [Read, Write]
---
Refund steps.
"""

FORMS = "Supporting content: the forms.\n"
SCRIPT = b"print('extract')\n"
LOGO = bytes(range(256))


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def skill_tree(root: Path) -> Path:
    """Two skills: `pdf-processing` (a text reference, a script, a binary asset, a hidden file
    that is not part of it) and `acme/billing/refunds` (nested prefix, folded description)."""
    write(root / "pdf-processing" / "SKILL.md", PDF_SKILL)
    write(root / "pdf-processing" / "references" / "FORMS.md", FORMS)
    write(root / "pdf-processing" / "scripts" / "extract.py", SCRIPT)
    write(root / "pdf-processing" / "assets" / "logo.bin", LOGO)
    write(root / "pdf-processing" / ".DS_Store", b"\0junk")
    write(root / "acme" / "billing" / "refunds" / "SKILL.md", REFUNDS_SKILL)
    return root
