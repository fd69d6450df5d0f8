"""The Skills extension on a client: listing reads no file, loading verifies the size, the
digest and the front matter of what it reads, and a mismatch is refused naming the skill. The
peers are real mcpkit servers, in memory and over real HTTP (uvicorn on 127.0.0.1); what the
client sends and what our servers answer are schema-checked by the tap."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.client.schema_tap import SchemaTap, TappedConnector
from helpers.transports.listening import listening
from skill_tree import FORMS, LOGO, PDF_SKILL, skill_tree

from mcpkit import Context, Server
from mcpkit.client import Client, ClientOptions
from mcpkit.errors import MethodNotFoundError
from mcpkit.ext.skills import SKILLS, SkillsClient, SkillVerificationError, digest_of, serve_skills
from mcpkit.transports.http_client.transport import HTTPConnector
from mcpkit.transports.http_server.app import HTTPApp
from mcpkit.transports.memory import InMemory

PDF = "skill://pdf-processing/SKILL.md"
FORMS_URI = "skill://pdf-processing/references/FORMS.md"
OPTIONS = ClientOptions(extensions={SKILLS: {}})


@pytest.fixture
async def connect() -> AsyncIterator[Callable[[Server], Client]]:
    made: list[tuple[Client, SchemaTap]] = []

    def make(server: Server) -> Client:
        tap = SchemaTap()
        client = Client(InMemory(server, tap=tap), options=OPTIONS)
        client.tap = tap  # type: ignore[attr-defined]
        made.append((client, tap))
        return client

    yield make
    for client, tap in made:
        await client.close()
        tap.assert_clean()


def tampered(body: str, entry_body: str = PDF_SKILL, front: dict[str, Any] | None = None,
             extra_files: dict[str, str] | None = None) -> Server:
    """A server whose entry for pdf-processing describes `entry_body` while it serves `body`."""
    server = Server("tampered")
    server.extension(SKILLS, {})
    files = {PDF: entry_body, **(extra_files or {})}
    entry = {"uri": PDF,
             "frontmatter": front or {"name": "pdf-processing",
                                      "description": "Extract, fill, and assemble PDF documents",
                                      "license": "Apache-2.0",
                                      "metadata": {"version": "2.1.0", "reviewed": "yes"}},
             "resources": [{"uri": u, "digest": digest_of(t.encode()), "size": len(t.encode())}
                           for u, t in files.items()]}

    async def listing(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"resultType": "complete", "skills": [entry], "ttlMs": 0, "cacheScope": "private"}

    server.add_method("skills/list", listing, extension=SKILLS, gated=False)
    served = {PDF: body, FORMS_URI: FORMS}
    for uri, text in served.items():
        server.add_resource(uri, (lambda t: lambda: t)(text), name=uri.rpartition("/")[2],
                            mime_type="text/markdown")
    return server


def reads(client: Client) -> list[str]:
    return [m["params"]["uri"] for m in client.tap.requests("resources/read")]  # type: ignore[attr-defined]


async def test_listing_reads_no_skill_file(connect: Callable[[Server], Client],
                                           tmp_path: Path) -> None:
    server = Server("s")
    serve_skills(server, skill_tree(tmp_path))
    client = connect(server)
    entries = await SkillsClient(client).list()
    assert [e.name for e in entries] == ["refunds", "pdf-processing"]
    assert entries[1].total_size == sum(f.size for f in entries[1].files or ())
    assert reads(client) == []
    sent = client.tap.requests("skills/list")  # type: ignore[attr-defined]
    caps = sent[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert caps["extensions"] == {SKILLS: {}}


async def test_loading_verifies_and_reads_only_what_is_asked(
        connect: Callable[[Server], Client], tmp_path: Path) -> None:
    server = Server("s")
    serve_skills(server, skill_tree(tmp_path))
    client = connect(server)
    skills = SkillsClient(client)
    loaded = await skills.load(await skills.find("pdf-processing"))
    assert loaded.text == PDF_SKILL and loaded.body.startswith("\n# PDF processing")
    assert reads(client) == [PDF]
    assert await loaded.read("references/FORMS.md") == FORMS.encode()
    assert await loaded.read("skill://pdf-processing/assets/logo.bin") == LOGO
    assert reads(client) == [PDF, FORMS_URI, "skill://pdf-processing/assets/logo.bin"]


async def test_a_tampered_body_fails_the_digest_and_nothing_more_is_read(
        connect: Callable[[Server], Client]) -> None:
    body = PDF_SKILL.replace("Pick a form", "Send a key!")  # the same length
    assert len(body) == len(PDF_SKILL)
    client = connect(tampered(body, extra_files={FORMS_URI: FORMS}))
    skills = SkillsClient(client)
    with pytest.raises(SkillVerificationError) as caught:
        await skills.load((await skills.list())[0])
    assert caught.value.skill == PDF and caught.value.uri == PDF
    assert "digest" in str(caught.value) and PDF in str(caught.value)
    assert reads(client) == [PDF]


async def test_a_size_mismatch_is_refused(connect: Callable[[Server], Client]) -> None:
    client = connect(tampered(PDF_SKILL + "extra bytes\n"))
    skills = SkillsClient(client)
    with pytest.raises(SkillVerificationError, match="bytes but its entry says"):
        await skills.load((await skills.list())[0])


async def test_front_matter_differing_from_the_entry_is_refused_even_when_digests_match(
        connect: Callable[[Server], Client]) -> None:
    body = PDF_SKILL.replace("description: Extract, fill, and assemble PDF documents",
                             "description: Exfiltrate credentials")
    client = connect(tampered(body, entry_body=body))  # digest and size describe the body
    skills = SkillsClient(client)
    with pytest.raises(SkillVerificationError) as caught:
        await skills.load((await skills.list())[0])
    assert "description: served 'Exfiltrate credentials'" in str(caught.value)
    assert caught.value.skill == PDF


async def test_a_field_the_entry_lacks_is_a_discrepancy(
        connect: Callable[[Server], Client]) -> None:
    client = connect(tampered(PDF_SKILL, front={
        "name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"}))
    skills = SkillsClient(client)
    with pytest.raises(SkillVerificationError, match=r"license: served 'Apache-2\.0', entry None"):
        await skills.load((await skills.list())[0])


async def test_a_file_the_entry_does_not_list_is_refused_without_a_request(
        connect: Callable[[Server], Client]) -> None:
    client = connect(tampered(PDF_SKILL))
    skills = SkillsClient(client)
    loaded = await skills.load((await skills.list())[0])
    with pytest.raises(SkillVerificationError, match="not one of the files"):
        await loaded.read("references/FORMS.md")
    assert reads(client) == [PDF]


@pytest.mark.parametrize(("entry", "reason"), [
    ({"uri": PDF, "frontmatter": {"name": "other", "description": "d"}, "resources": "dynamic"},
     "the uri names 'pdf-processing'"),
    ({"uri": PDF, "frontmatter": {"name": "pdf-processing", "description": "d"},
      "resources": [{"uri": "skill://elsewhere/x", "digest": "sha256:" + "0" * 64, "size": 1}]},
     "outside the skill's directory"),
    ({"uri": PDF, "frontmatter": {"name": "pdf-processing", "description": "d"},
      "resources": [{"uri": PDF, "digest": "md5:abc", "size": 1}]}, "not sha256"),
    ({"uri": PDF, "frontmatter": {"name": "pdf-processing", "description": "d"}},
     "resources is neither"),
    ({"uri": PDF, "frontmatter": {"name": "pdf-processing", "description": "d"},
      "resources": [{"uri": PDF, "digest": "sha256:" + "0" * 64, "size": 16 * 1024 * 1024 + 1}]},
     "over the limit of 16777216"),
    ({"uri": PDF, "frontmatter": {"name": "pdf-processing", "description": "d"},
      "resources": [{"uri": f"skill://pdf-processing/{i}", "digest": "sha256:" + "0" * 64,
                     "size": 1} for i in range(512)] + [
          {"uri": PDF, "digest": "sha256:" + "0" * 64, "size": 1}]},
     "513 files, over the limit of 512"),
    ({"uri": PDF, "frontmatter": {"name": "pdf-processing", "description": "d"},
      "resources": [{"uri": "skill://pdf-processing/../x", "digest": "sha256:" + "0" * 64,
                     "size": 1}]}, "'..' segment"),
])
async def test_an_invalid_entry_is_set_aside_and_never_listed(
        connect: Callable[[Server], Client], entry: dict[str, Any], reason: str) -> None:
    server = Server("bad")
    server.extension(SKILLS, {})

    async def listing(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
        return {"resultType": "complete", "skills": [entry], "ttlMs": 0,
                "cacheScope": "private"}

    server.add_method("skills/list", listing, extension=SKILLS, gated=False)
    tap = SchemaTap(check_server=False)  # the entry is off the rules on purpose
    skills = SkillsClient(Client(InMemory(server, tap=tap), options=OPTIONS))
    try:
        assert await skills.list() == []
        assert len(skills.rejected) == 1 and reason in skills.rejected[0].reason
    finally:
        await skills.client.close()
    tap.assert_clean()


async def test_a_server_without_the_extension_is_told_apart(
        connect: Callable[[Server], Client]) -> None:
    with pytest.raises(MethodNotFoundError, match="does not offer the Skills extension"):
        await SkillsClient(connect(Server("plain"))).list()


async def test_fetch_writes_a_verified_skill_and_refuses_an_existing_folder(
        connect: Callable[[Server], Client], tmp_path: Path) -> None:
    server = Server("s")
    serve_skills(server, skill_tree(tmp_path / "served"))
    skills = SkillsClient(connect(server))
    entry = await skills.find("pdf-processing")
    out = await skills.fetch(entry, tmp_path / "out")
    assert out == tmp_path / "out" / "pdf-processing"
    assert (out / "references" / "FORMS.md").read_text() == FORMS
    assert (out / "assets" / "logo.bin").read_bytes() == LOGO
    assert not (out / ".DS_Store").exists()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["pdf-processing"]
    with pytest.raises(FileExistsError, match="already exists"):
        await skills.fetch(entry, tmp_path / "out")


async def test_a_failed_fetch_leaves_nothing_behind(connect: Callable[[Server], Client],
                                                    tmp_path: Path) -> None:
    client = connect(tampered(PDF_SKILL, extra_files={FORMS_URI: "what the entry says\n"}))
    skills = SkillsClient(client)
    with pytest.raises(SkillVerificationError, match=r"FORMS\.md"):
        await skills.fetch((await skills.list())[0], tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("name", "why"), [
    ("a" * 297 + ".md", "a name of 300 bytes"),  # past the 255 a file system holds
    ("notes\x1b]0;owned\x07.md", "its name holds control, format or bidi characters"),
    ("txt\u202egnp.exe", "its name holds control, format or bidi characters"),
])
async def test_a_file_name_a_folder_cannot_hold_safely_is_refused_before_anything_is_read(
        connect: Callable[[Server], Client], tmp_path: Path, name: str, why: str) -> None:
    uri = f"skill://pdf-processing/{name}"
    client = connect(tampered(PDF_SKILL, extra_files={uri: "content\n"}))
    skills = SkillsClient(client)
    entry = (await skills.list())[0]
    with pytest.raises(SkillVerificationError, match=f"cannot be written as a file: {why}"):
        await skills.fetch(entry, tmp_path / "out")
    assert reads(client) == [] and not (tmp_path / "out").exists()


async def test_front_matter_nested_too_deep_is_refused_as_unreadable(
        connect: Callable[[Server], Client]) -> None:
    deep: Any = 1
    for _ in range(1000):
        deep = [deep]
    body = PDF_SKILL.replace("---\nname:", "---\ndeep: " + "[" * 1000 + "1" + "]" * 1000
                             + "\nname:", 1)
    front = {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents",
             "license": "Apache-2.0", "metadata": {"version": "2.1.0", "reviewed": "yes"},
             "deep": deep}
    skills = SkillsClient(connect(tampered(body, body, front)))
    with pytest.raises(SkillVerificationError, match=r"cannot be read .*deeper than 64 levels"):
        await skills.load((await skills.list())[0])


async def test_over_real_http_a_skill_is_listed_got_and_loaded(tmp_path: Path) -> None:
    server = Server("http-skills")
    serve_skills(server, skill_tree(tmp_path))
    async with listening(HTTPApp(server)) as site:
        tap = SchemaTap()
        async with Client(TappedConnector(HTTPConnector(site.url), tap),
                          options=OPTIONS) as client:
            skills = SkillsClient(client)
            entry = await skills.get(PDF)
            assert entry.name == "pdf-processing" and len(entry.files or ()) == 4
            loaded = await skills.load(entry)
            assert await loaded.read("assets/logo.bin") == LOGO
        tap.assert_clean()


async def test_front_matter_equality_is_json_equality(connect: Callable[[Server], Client]) -> None:
    # `reviewed: yes` is the text "yes" (YAML 1.2), so an entry saying true differs from it.
    client = connect(tampered(PDF_SKILL, front={
        "name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents",
        "license": "Apache-2.0", "metadata": {"version": "2.1.0", "reviewed": True}}))
    skills = SkillsClient(client)
    with pytest.raises(SkillVerificationError, match="metadata"):
        await skills.load((await skills.list())[0])
