"""Token storage: keyed by issuer and resource, the file private and written whole, a file
that cannot be trusted refused and left as it was."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mcpkit.store.tokens import (
    ClientInfo,
    FileTokenStorage,
    MemoryTokenStorage,
    TokenFileError,
    TokenSet,
    TokenStorage,
)

TOKENS = TokenSet("access-1", refresh_token="refresh-1", expires_at=100.0, scope="a b")


@pytest.mark.parametrize("kind", ["memory", "file"])
async def test_tokens_and_clients_are_kept_per_issuer_and_resource(kind: str,
                                                                   tmp_path: Path) -> None:
    storage: TokenStorage = (MemoryTokenStorage() if kind == "memory"
                             else FileTokenStorage(tmp_path / "tokens.json"))
    assert isinstance(storage, TokenStorage)
    await storage.save("https://as1", "https://mcp/a", TOKENS)
    assert await storage.load("https://as1", "https://mcp/a") == TOKENS
    assert await storage.load("https://as2", "https://mcp/a") is None
    assert await storage.load("https://as1", "https://mcp/b") is None
    client = ClientInfo("id-1", "secret-1", "client_secret_basic", "dcr", ("http://127.0.0.1/c",))
    await storage.save_client("https://as1", client)
    assert await storage.load_client("https://as1") == client
    assert await storage.load_client("https://as2") is None
    await storage.delete("https://as1", "https://mcp/a")
    assert await storage.load("https://as1", "https://mcp/a") is None
    await storage.delete("https://as1", "https://mcp/a")  # absent: nothing happens


async def test_the_file_survives_a_new_storage_object_and_is_private(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "tokens.json"
    await FileTokenStorage(path).save("https://as", "https://mcp", TOKENS)
    assert await FileTokenStorage(path).load("https://as", "https://mcp") == TOKENS
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["tokens.json"]  # no temporary left


async def test_the_default_file_is_in_the_data_folder(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPKIT_DATA_DIR", str(tmp_path))
    assert FileTokenStorage().path == tmp_path / "tokens.json"


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
async def test_a_file_others_may_read_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    await FileTokenStorage(path).save("https://as", "https://mcp", TOKENS)
    path.chmod(0o644)
    before = path.read_bytes()
    with pytest.raises(TokenFileError, match="chmod 600"):
        await FileTokenStorage(path).save("https://as", "https://other", TOKENS)
    assert path.read_bytes() == before


async def test_a_file_that_does_not_parse_is_refused_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{not json")
    path.chmod(0o600)
    with pytest.raises(TokenFileError, match="not JSON"):
        await FileTokenStorage(path).load("https://as", "https://mcp")
    with pytest.raises(TokenFileError):
        await FileTokenStorage(path).save("https://as", "https://mcp", TOKENS)
    assert path.read_text() == "{not json"
    path.write_text('{"tokens": []}')
    with pytest.raises(TokenFileError, match="not an mcpkit token file"):
        await FileTokenStorage(path).load("https://as", "https://mcp")


def test_tokens_never_show_in_a_repr() -> None:
    shown = repr(TOKENS) + repr(ClientInfo("id", "the-secret"))
    assert "access-1" not in shown and "refresh-1" not in shown and "the-secret" not in shown


def test_expiry_has_a_margin() -> None:
    assert not TOKENS.expired(now=50.0)
    assert TOKENS.expired(now=75.0)
    assert not TokenSet("a").expired(now=1e12)
