"""The Skills extension on a server: skills from a directory and from code, `skills/list`
(paged) and `skills/get`, the files as resources, `resources/directory/read`, the limits and
the confinement of every path to its skill's folder. Every message the server sends is checked
against the official schema (the skills results by the extension's own shapes)."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
from skill_tree import FORMS, LOGO, PDF_SKILL, SCRIPT, skill_tree, write

from mcpkit import Server, ServerOptions
from mcpkit.ext.skills import MAX_FILES, SKILLS, Skills, SkillSourceError, digest_of, serve_skills

PDF = "skill://pdf-processing/SKILL.md"
REFUNDS = "skill://acme/billing/refunds/SKILL.md"


def served(tmp_path: Path, **options: Any) -> Server:
    server = Server("skills", options=ServerOptions(**options))
    serve_skills(server, skill_tree(tmp_path / "skills"))
    return server


async def test_discover_offers_the_extension_with_directory_read_and_resources(
        wire_factory: Any, tmp_path: Path) -> None:
    wire = wire_factory(served(tmp_path))
    caps = (await wire.request("server/discover"))["result"]["capabilities"]
    assert caps["extensions"] == {SKILLS: {"directoryRead": True}}
    assert "resources" in caps


async def test_skills_list_carries_every_file_with_its_digest_and_size(
        wire_factory: Any, tmp_path: Path) -> None:
    wire = wire_factory(served(tmp_path))
    result = (await wire.request("skills/list"))["result"]
    assert [s["uri"] for s in result["skills"]] == [REFUNDS, PDF]
    pdf = result["skills"][1]
    assert pdf["frontmatter"] == {"name": "pdf-processing",
                                  "description": "Extract, fill, and assemble PDF documents",
                                  "license": "Apache-2.0",
                                  "metadata": {"version": "2.1.0", "reviewed": "yes"}}
    files = {r["uri"]: r for r in pdf["resources"]}
    assert pdf["resources"][0]["uri"] == PDF  # SKILL.md first
    assert set(files) == {PDF, "skill://pdf-processing/references/FORMS.md",
                          "skill://pdf-processing/scripts/extract.py",
                          "skill://pdf-processing/assets/logo.bin"}  # no .DS_Store
    body = PDF_SKILL.encode()
    assert files[PDF] == {"uri": PDF, "digest": digest_of(body), "size": len(body)}
    assert files["skill://pdf-processing/assets/logo.bin"]["size"] == 256
    refunds = result["skills"][0]["frontmatter"]
    assert refunds["description"] == "Process customer refund requests per company policy"
    assert refunds["allowed-tools"] == ["Read", "Write"]
    assert result["ttlMs"] == 60_000 and result["cacheScope"] == "public"


async def test_the_methods_answer_a_request_that_did_not_declare_the_extension(
        wire_factory: Any, tmp_path: Path) -> None:
    # The official suite calls them so: the server's offer is its commitment to answer.
    wire = wire_factory(served(tmp_path))
    caps = wire.meta()["io.modelcontextprotocol/clientCapabilities"]
    assert "extensions" not in caps
    assert (await wire.request("skills/get", {"uri": PDF}))["result"]["skill"]["uri"] == PDF


async def test_skills_list_pages_and_never_splits_an_entry(wire_factory: Any,
                                                          tmp_path: Path) -> None:
    wire = wire_factory(served(tmp_path, page_size=1))
    first = (await wire.request("skills/list"))["result"]
    assert [s["uri"] for s in first["skills"]] == [REFUNDS]
    second = (await wire.request("skills/list", {"cursor": first["nextCursor"]}))["result"]
    assert [s["uri"] for s in second["skills"]] == [PDF] and "nextCursor" not in second
    assert len(second["skills"][0]["resources"]) == 4
    bad = await wire.request("skills/list", {"cursor": "not-a-cursor"})
    assert bad["error"]["code"] == -32602 and "cursor" in bad["error"]["message"]


async def test_skills_get_returns_one_entry_and_refuses_an_unknown_uri(
        wire_factory: Any, tmp_path: Path) -> None:
    wire = wire_factory(served(tmp_path))
    result = (await wire.request("skills/get", {"uri": REFUNDS}))["result"]
    assert result["skill"]["uri"] == REFUNDS and "nextCursor" not in result
    assert "ttlMs" in result and "cacheScope" in result
    missing = await wire.request("skills/get", {"uri": "skill://refunds/SKILL.md"})
    assert missing["error"]["code"] == -32602
    assert missing["error"]["data"] == {"uri": "skill://refunds/SKILL.md"}
    assert f"did you mean {REFUNDS}" in missing["error"]["message"]
    wrong = await wire.request("skills/get", {"uri": 7})
    assert wrong["error"]["code"] == -32602 and "string" in wrong["error"]["message"]


async def test_the_manifest_resource_carries_the_front_matter_metadata(
        wire_factory: Any, tmp_path: Path) -> None:
    wire = wire_factory(served(tmp_path))
    listed = {r["uri"]: r for r in (await wire.request("resources/list"))["result"]["resources"]}
    assert listed[PDF] == {"uri": PDF, "name": "pdf-processing", "mimeType": "text/markdown",
                           "description": "Extract, fill, and assemble PDF documents",
                           "size": len(PDF_SKILL.encode())}
    assert listed["skill://pdf-processing/references/FORMS.md"]["name"] == "FORMS.md"
    read = (await wire.request("resources/read", {"uri": PDF}))["result"]["contents"][0]
    assert read == {"uri": PDF, "mimeType": "text/markdown", "text": PDF_SKILL}


async def test_text_is_served_as_text_and_binary_as_a_blob_with_the_digested_bytes(
        wire_factory: Any, tmp_path: Path) -> None:
    wire = wire_factory(served(tmp_path))
    forms = (await wire.request("resources/read", {
        "uri": "skill://pdf-processing/references/FORMS.md"}))["result"]["contents"][0]
    assert forms["text"] == FORMS
    logo = (await wire.request("resources/read", {
        "uri": "skill://pdf-processing/assets/logo.bin"}))["result"]["contents"][0]
    assert base64.b64decode(logo["blob"]) == LOGO
    script = (await wire.request("resources/read", {
        "uri": "skill://pdf-processing/scripts/extract.py"}))["result"]["contents"][0]
    assert (script.get("text") or "").encode() == SCRIPT


async def test_directory_read_lists_direct_children_with_subdirectories_as_directories(
        wire_factory: Any, tmp_path: Path) -> None:
    wire = wire_factory(served(tmp_path))
    root = (await wire.request("resources/directory/read",
                               {"uri": "skill://pdf-processing"}))["result"]
    kinds = {r["uri"]: r.get("mimeType") for r in root["resources"]}
    assert kinds == {"skill://pdf-processing/SKILL.md": "text/markdown",
                     "skill://pdf-processing/references": "inode/directory",
                     "skill://pdf-processing/scripts": "inode/directory",
                     "skill://pdf-processing/assets": "inode/directory"}
    prefix = (await wire.request("resources/directory/read", {"uri": "skill://acme"}))["result"]
    assert [r["uri"] for r in prefix["resources"]] == ["skill://acme/billing"]
    for uri, word in ((PDF, "not a directory"), ("skill://nowhere", "no directory")):
        refused = await wire.request("resources/directory/read", {"uri": uri})
        assert refused["error"]["code"] == -32602 and word in refused["error"]["message"]


async def test_directory_read_pages(wire_factory: Any, tmp_path: Path) -> None:
    wire = wire_factory(served(tmp_path, page_size=3))
    first = (await wire.request("resources/directory/read",
                                {"uri": "skill://pdf-processing"}))["result"]
    rest = (await wire.request("resources/directory/read", {
        "uri": "skill://pdf-processing", "cursor": first["nextCursor"]}))["result"]
    assert len(first["resources"]) == 3 and len(rest["resources"]) == 1


async def test_without_directory_read_the_method_is_unknown(wire_factory: Any) -> None:
    server = Server("plain")
    skills = Skills(server, directory_read=False)
    skills.add("notes", {"SKILL.md": "---\nname: notes\ndescription: Take notes\n---\n"})
    wire = wire_factory(server)
    caps = (await wire.request("server/discover"))["result"]["capabilities"]
    assert caps["extensions"] == {SKILLS: {}}
    refused = await wire.request("resources/directory/read", {"uri": "skill://notes"})
    assert refused["error"]["code"] == -32601


async def test_a_skill_from_code_is_served_with_its_digests(wire_factory: Any) -> None:
    server = Server("code")
    skills = Skills(server)
    entry = skills.add("team/notes", {
        "SKILL.md": "---\nname: notes\ndescription: Take notes\n---\nBody\n",
        "templates/day.md": "# Day\n", "data.bin": b"\x00\xff"})
    assert [f.uri for f in entry.files or ()] == [
        "skill://team/notes/SKILL.md", "skill://team/notes/data.bin",
        "skill://team/notes/templates/day.md"]
    wire = wire_factory(server)
    got = (await wire.request("skills/get", {"uri": "skill://team/notes/SKILL.md"}))["result"]
    sizes = {r["uri"]: r["size"] for r in got["skill"]["resources"]}
    assert sizes["skill://team/notes/data.bin"] == 2


def test_a_front_matter_naming_another_skill_than_its_folder_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "alpha" / "SKILL.md", "---\nname: beta\ndescription: d\n---\n")
    with pytest.raises(SkillSourceError, match="'beta' but the folder is 'alpha'"):
        serve_skills(Server("x"), tmp_path)


@pytest.mark.parametrize(("text", "words"), [
    ("no front matter", "does not begin with front matter"),
    ("---\nname: bad\n---\n", "non-empty 'description'"),
    ("---\nname: bad\ndescription: a: b\n---\n", "line 3"),
    ("---\nname: bad\ndescription: &a x\n---\n", "anchors"),
])
def test_an_unreadable_skill_md_is_refused_naming_the_file(tmp_path: Path, text: str,
                                                          words: str) -> None:
    write(tmp_path / "bad" / "SKILL.md", text)
    with pytest.raises(SkillSourceError) as caught:
        serve_skills(Server("x"), tmp_path)
    assert "bad/SKILL.md" in str(caught.value) and words in str(caught.value)


def test_a_name_breaking_the_naming_rules_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "Bad--Name" / "SKILL.md", "---\nname: Bad--Name\ndescription: d\n---\n")
    with pytest.raises(ValueError, match="lowercase letters, digits and hyphens"):
        serve_skills(Server("x"), tmp_path)


def test_a_skill_over_the_file_limit_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "big"
    write(folder / "SKILL.md", "---\nname: big\ndescription: d\n---\n")
    for i in range(MAX_FILES):  # with SKILL.md: one over
        write(folder / "parts" / f"{i}.txt", "x")
    with pytest.raises(SkillSourceError, match=f"{MAX_FILES + 1} files, over the limit"):
        serve_skills(Server("x"), tmp_path)


def test_a_skill_over_the_size_limit_is_refused() -> None:
    files: dict[str, str | bytes] = {"SKILL.md": "---\nname: huge\ndescription: d\n---\n",
                                     "blob.bin": b"\0" * (16 * 1024 * 1024)}
    with pytest.raises(SkillSourceError, match="over the limit of 16777216"):
        Skills(Server("x")).add("huge", files)


def test_a_symbolic_link_out_of_the_skill_is_refused(tmp_path: Path) -> None:
    secret = write(tmp_path / "secret.txt", "password")
    write(tmp_path / "skills" / "leaky" / "SKILL.md", "---\nname: leaky\ndescription: d\n---\n")
    os.symlink(secret, tmp_path / "skills" / "leaky" / "notes.txt")
    with pytest.raises(SkillSourceError, match="outside the skill's folder"):
        serve_skills(Server("x"), tmp_path / "skills")


def test_a_link_inside_the_skill_is_served(tmp_path: Path) -> None:
    folder = tmp_path / "linked"
    write(folder / "SKILL.md", "---\nname: linked\ndescription: d\n---\n")
    write(folder / "real.md", "real")
    os.symlink(folder / "real.md", folder / "alias.md")
    entry = serve_skills(Server("x"), tmp_path).entries[0]
    assert {f.uri.rpartition("/")[2] for f in entry.files or ()} == {"SKILL.md", "real.md",
                                                                      "alias.md"}


@pytest.mark.parametrize("path", ["../up", "a/../b", "/abs", "a//b", ""])
def test_code_paths_must_stay_inside_the_skill(path: str) -> None:
    files: dict[str, str | bytes] = {"SKILL.md": "---\nname: s\ndescription: d\n---\n",
                                     path: "x"}
    with pytest.raises(SkillSourceError, match="must stay inside the skill"):
        Skills(Server("x")).add("s", files)


async def test_a_file_swapped_for_a_link_out_after_loading_is_not_served(
        wire_factory: Any, tmp_path: Path) -> None:
    server = served(tmp_path)
    forms = tmp_path / "skills" / "pdf-processing" / "references" / "FORMS.md"
    secret = write(tmp_path / "secret.txt", "password")
    forms.unlink()
    os.symlink(secret, forms)
    wire = wire_factory(server)
    answer = await wire.request("resources/read",
                                {"uri": "skill://pdf-processing/references/FORMS.md"})
    assert answer["error"]["code"] == -32603
    assert "password" not in str(answer) and str(tmp_path) not in str(answer)


async def test_a_file_edited_after_loading_is_an_error_not_unlisted_content(
        wire_factory: Any, tmp_path: Path) -> None:
    server = served(tmp_path)
    (tmp_path / "skills" / "pdf-processing" / "references" / "FORMS.md").write_text("edited")
    wire = wire_factory(server)
    answer = await wire.request("resources/read",
                                {"uri": "skill://pdf-processing/references/FORMS.md"})
    assert answer["error"]["code"] == -32603
    assert "skill://pdf-processing/references/FORMS.md" in answer["error"]["message"]


def test_adding_the_same_skill_twice_is_refused(tmp_path: Path) -> None:
    skills = Skills(Server("x"))
    skills.add_directory(skill_tree(tmp_path))
    with pytest.raises(SkillSourceError, match="already served"):
        skills.add_directory(tmp_path)


def test_a_nested_skill_is_published_and_its_files_belong_to_the_enclosing_one(
        tmp_path: Path) -> None:
    write(tmp_path / "outer" / "SKILL.md", "---\nname: outer\ndescription: d\n---\n")
    write(tmp_path / "outer" / "inner" / "SKILL.md", "---\nname: inner\ndescription: e\n---\n")
    entries = {e.uri: e for e in serve_skills(Server("x"), tmp_path).entries}
    assert set(entries) == {"skill://outer/SKILL.md", "skill://outer/inner/SKILL.md"}
    outer = {f.uri for f in entries["skill://outer/SKILL.md"].files or ()}
    assert "skill://outer/inner/SKILL.md" in outer
