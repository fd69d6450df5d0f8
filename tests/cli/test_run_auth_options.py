"""`mcpkit run`'s `--auth-*` options as the command line reads them: the environment stands in
for an option it lacks, an option wins over its variable, and what a reloading parent passes
on (and a `--workers` process reads back) says the same protection again."""

from __future__ import annotations

import pytest

from mcpkit.cli.main import _parser
from mcpkit.cli.run_auth import ENV, SECRET_ENV, AuthSettings, auth_settings, passed_on
from mcpkit.cli.usage import UsageError


def settings(*argv: str) -> AuthSettings | None:
    return auth_settings(_parser().parse_args(["run", "server.py", "--http", "8000", *argv]))


def test_options_and_variables_make_one_protection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV["issuer"], "https://env.example.com")
    monkeypatch.setenv(ENV["scopes"], "a:read b:read")
    got = settings("--auth-issuer", "https://auth.example.com")
    assert got == AuthSettings("https://auth.example.com", None, ("a:read", "b:read"))
    monkeypatch.setenv(SECRET_ENV, "s3cret")
    got = settings("--auth-introspection", "https://env.example.com/introspect",
                   "--auth-client-id", "rs", "--auth-audience", "https://mcp.example.com/mcp")
    assert got is not None and got.issuer == "https://env.example.com"
    assert (got.introspection, got.client_id, got.audience) == (
        "https://env.example.com/introspect", "rs", "https://mcp.example.com/mcp")
    assert "s3cret" not in " ".join(passed_on(got)) and "s3cret" not in str(got.to_json())
    again = settings(*passed_on(got))
    assert again == got == AuthSettings.from_json(got.to_json())


def test_no_issuer_is_no_protection_and_bad_scopes_are_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*ENV.values(), SECRET_ENV):
        monkeypatch.delenv(name, raising=False)
    assert settings() is None
    with pytest.raises(UsageError, match="--auth-scopes"):
        settings("--auth-issuer", "https://a.example.com", "--auth-scopes", "bad\"scope")
    with pytest.raises(UsageError, match="--auth-client-id is the client of"):
        settings("--auth-issuer", "https://a.example.com", "--auth-client-id", "x")
