"""The text a principal is kept and compared as: injective, NUL-free, the same bytes in every
store engine, and read the same whether it was kept before or after the spelling changed (a
pair used to be `issuer\\0subject`, which PostgreSQL refuses). No event loop."""

from __future__ import annotations

import hashlib
import itertools

import pytest

from mcpkit.protocol.principals import current_text, digest_text, principal_parts, principal_text
from mcpkit.protocol.request_state import principal_digest
from mcpkit.server.sealing import principal_key

ISSUER = "https://as.example"
SUBJECTS = ["alice", "", "[admin]", "a\0b", "\ud800lone", "ünïcode ✓", '["x","y"]', "x\0"]
PRINCIPALS: list[tuple[str | None, str]] = [
    *((None, s) for s in SUBJECTS), *((ISSUER, s) for s in SUBJECTS),
    ("https://other.example", "alice"), ("a\0b", "c"), ("a", "b\0c"), ("[", "]"),
]


def storable(text: str) -> bool:
    """What PostgreSQL's text, a Redis key and SQLite all hold as they are."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\0" not in text


@pytest.mark.parametrize(("issuer", "subject"), PRINCIPALS)
def test_every_principal_is_spelled_in_text_every_engine_holds_and_reads_back(
        issuer: str | None, subject: str) -> None:
    text = principal_text(issuer, subject)
    assert storable(text)
    assert principal_parts(text) == (issuer or None, subject)
    assert principal_text(issuer, subject) == text  # stable: the same every time


def test_no_two_principals_share_a_spelling() -> None:
    spelled = [principal_text(i, s) for i, s in PRINCIPALS]
    assert len(set(spelled)) == len(spelled)
    for (a, b), (c, d) in itertools.combinations(PRINCIPALS, 2):
        assert (principal_text(a, b) == principal_text(c, d)) == ((a or None, b) == (c or None, d))


def test_a_plain_subject_keeps_its_spelling_and_a_pair_is_a_json_array() -> None:
    assert principal_text(None, "alice") == "alice"  # kept before as it is: unchanged
    assert principal_text(ISSUER, "alice") == '["https://as.example","alice"]'
    assert principal_key({"iss": ISSUER, "sub": "alice"}) == '["https://as.example","alice"]'
    assert principal_key("alice") == "alice"


@pytest.mark.parametrize(("issuer", "subject"), [(i, s) for i, s in PRINCIPALS if i])
def test_a_pair_kept_in_the_old_spelling_reads_as_the_same_principal(
        issuer: str, subject: str) -> None:
    if "\0" in issuer:
        return  # the old spelling could not tell this pair apart; nothing kept it
    assert current_text(f"{issuer}\0{subject}") == principal_text(issuer, subject)


@pytest.mark.parametrize(("issuer", "subject"), [p for p in PRINCIPALS if "\ud800" not in p[1]])
def test_what_was_sealed_for_a_principal_before_still_opens_for_it(
        issuer: str | None, subject: str) -> None:
    old = f"{issuer}\0{subject}" if issuer else subject
    before = hashlib.sha256(b"principal\0" + old.encode()).digest()[:16]
    assert digest_text(principal_text(issuer, subject)) == old
    assert principal_digest(principal_text(issuer, subject)) == before
