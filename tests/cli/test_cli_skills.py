"""`mcpkit skills` and `mcpkit run --skills`, run as a user runs them: real processes, the
stdio server behind the schema-checking relay (every message either side sends is checked),
the HTTP server a real `mcpkit run --http` process."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from cli_run import HERE, RELAY, SERVER, mcpkit
from helpers.client.schema_tap import SchemaTap, TappedConnector
from helpers.transports.http_peer import ServerProcess

from mcpkit.client import Client, ClientOptions
from mcpkit.ext.skills import SKILLS, SkillsClient
from mcpkit.transports.http_client.transport import HTTPConnector

SKILL = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\nBody\n"
FORMS = "The forms.\n"


def skills_dir(root: Path) -> Path:
    (root / "pdf-processing" / "references").mkdir(parents=True)
    (root / "pdf-processing" / "SKILL.md").write_text(SKILL)
    (root / "pdf-processing" / "references" / "FORMS.md").write_text(FORMS)
    return root


def checked_run(*run_args: str) -> str:
    """SERVER for a command: `mcpkit run RUN_ARGS` (stdio) behind the checking relay."""
    return shlex.join([sys.executable, RELAY, sys.executable, "-m", "mcpkit", "run", *run_args])


def test_skills_lists_what_a_skills_only_server_serves(tmp_path: Path) -> None:
    server = checked_run("--skills", str(skills_dir(tmp_path / "skills")))
    done = mcpkit(tmp_path, "skills", server)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "pdf-processing  skill://pdf-processing/SKILL.md  (2 files, "
        f"{len(SKILL) + len(FORMS)} bytes)",
        "  Extract, fill, and assemble PDF documents"]
    as_json = json.loads(mcpkit(tmp_path, "skills", server, "--json").stdout)
    assert [s["uri"] for s in as_json["skills"]] == ["skill://pdf-processing/SKILL.md"]
    assert as_json["rejected"] == []


def test_skills_get_writes_the_verified_skill_and_keeps_an_existing_folder(
        tmp_path: Path) -> None:
    server = checked_run("--skills", str(skills_dir(tmp_path / "skills")))
    out = tmp_path / "out"
    done = mcpkit(tmp_path, "skills", server, "get", "pdf-processing", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "fetched pdf-processing: 2 files" in done.stdout
    assert (out / "pdf-processing" / "SKILL.md").read_text() == SKILL
    assert (out / "pdf-processing" / "references" / "FORMS.md").read_text() == FORMS
    again = mcpkit(tmp_path, "skills", server, "get", "pdf-processing", "--out", str(out))
    assert again.returncode == 2 and "already exists" in again.stderr
    assert (out / "pdf-processing" / "SKILL.md").read_text() == SKILL


def test_skills_get_refuses_a_tampered_skill_naming_it_and_writes_nothing(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = mcpkit(tmp_path, "skills", checked_run(str(HERE / "tampered_skills_server.py")),
                  "get", "notes", "--out", str(out))
    assert done.returncode == 1, done.stdout
    assert "refused: skill skill://notes/SKILL.md" in done.stderr
    assert "digest" in done.stderr
    assert not out.exists() or list(out.iterdir()) == []


def test_an_unknown_skill_name_lists_the_names(tmp_path: Path) -> None:
    server = checked_run("--skills", str(skills_dir(tmp_path / "skills")))
    done = mcpkit(tmp_path, "skills", server, "get", "pdf", "--out", str(tmp_path))
    assert done.returncode == 2
    assert "no skill named 'pdf' is listed (the skills: pdf-processing)" in done.stderr


def test_a_server_without_skills_is_told_apart(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "skills", checked_run(SERVER))
    assert done.returncode == 1
    assert "does not offer the Skills extension" in done.stderr


def test_run_skills_beside_a_server_file_serves_both(tmp_path: Path) -> None:
    server = checked_run(SERVER, "--skills", str(skills_dir(tmp_path / "skills")))
    assert "pdf-processing" in mcpkit(tmp_path, "skills", server).stdout
    assert mcpkit(tmp_path, "tools", server).returncode == 0


def test_run_refuses_a_bad_skills_directory_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "skills" / "alpha").mkdir(parents=True)
    (tmp_path / "skills" / "alpha" / "SKILL.md").write_text("---\nname: beta\ndescription: d\n---\n")
    done = mcpkit(tmp_path, "run", "--skills", str(tmp_path / "skills"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "alpha/SKILL.md: its name is 'beta' but the folder is 'alpha'" in done.stderr
    nothing = mcpkit(tmp_path, "run")
    assert nothing.returncode == 2 and "--skills DIR" in nothing.stderr


async def test_run_skills_over_http_serves_verified_skills(tmp_path: Path) -> None:
    # `mcpkit run --skills DIR --http ADDRESS`: no server file, the target left out.
    process = ServerProcess.start(f"--skills={skills_dir(tmp_path / 'skills')}")
    try:
        tap = SchemaTap()
        options = ClientOptions(extensions={SKILLS: {}})
        async with Client(TappedConnector(HTTPConnector(process.url), tap),
                          options=options) as client:
            skills = SkillsClient(client)
            loaded = await skills.load(await skills.find("pdf-processing"))
            assert await loaded.read("references/FORMS.md") == FORMS.encode()
        tap.assert_clean()
    finally:
        process.stop()
