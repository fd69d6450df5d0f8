"""A missing extra is one line that names it, at start or registration, never a traceback and
never a failed call. Modules are hidden here (`sys.modules[name] = None` makes importing them
fail), in a launcher process for the command line and with monkeypatch in this one, so the
checks run in the main environment; tests/e2e/test_bare_install.py does it for real."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers.wire import MODERN, check_client_message, check_server_message

from mcpkit import MissingExtraError, Server
from mcpkit.client.tools import OutputChecker, vet_tool
from mcpkit.protocol.extras import EXTRAS, available, explain, missing_extra, require
from mcpkit.testing import WireRecorder, connect

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = """
import runpy, sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None
sys.argv = ["mcpkit", *sys.argv[2:]]
runpy.run_module("mcpkit", run_name="__main__")
"""
RAW_INPUT = """
from mcpkit import Server
server = Server("raw", "1.0.0")

@server.tool(input_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
def count(n: int) -> str:
    return str(n)
"""
RAW_OUTPUT = """
from mcpkit import Server
server = Server("raw", "1.0.0")

@server.tool(output_schema={"type": "object"}, structured_output=False)
def count(n: int) -> str:
    return str(n)
"""
PYDANTIC = """
from pydantic import BaseModel
from mcpkit import Server
server = Server("models", "1.0.0")

class Point(BaseModel):
    x: int

@server.tool()
def where(p: Point) -> int:
    return p.x
"""
SCHEMA_LINE = "a raw JSON Schema needs the 'schema' extra: pip install 'mcpkit[schema]'"


def run_hiding(hidden: str, *args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`mcpkit ARGS` in a process where the modules `hidden` names do not import."""
    launcher = tmp_path / "hide.py"
    launcher.write_text(LAUNCHER)
    return subprocess.run([sys.executable, str(launcher), hidden, *args], capture_output=True,
                          text=True, timeout=60, cwd=ROOT, stdin=subprocess.DEVNULL)


def server_file(tmp_path: Path, source: str) -> str:
    path = tmp_path / "server.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


# -- the command line -----------------------------------------------------------------------


@pytest.mark.parametrize("mode", [["--stdio"], ["--http", "127.0.0.1:0"]])
def test_a_raw_input_schema_without_jsonschema_is_one_line_and_exit_2(
        tmp_path: Path, mode: list[str]) -> None:
    path = server_file(tmp_path, RAW_INPUT)
    done = run_hiding("jsonschema", "run", path, *mode, tmp_path=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        f"mcpkit run: {path}: function 'count': input schema: {SCHEMA_LINE}\n")
    assert done.stdout == ""


def test_a_raw_output_schema_without_jsonschema_is_refused_even_unstructured(
        tmp_path: Path) -> None:
    path = server_file(tmp_path, RAW_OUTPUT)
    done = run_hiding("jsonschema", "run", path, tmp_path=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        f"mcpkit run: {path}: function 'count': output schema: {SCHEMA_LINE}\n")


def test_a_server_importing_pydantic_without_it_names_the_pydantic_extra(tmp_path: Path) -> None:
    path = server_file(tmp_path, PYDANTIC)
    done = run_hiding("pydantic", "run", path, tmp_path=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        f"mcpkit run: {path}: importing pydantic needs the 'pydantic' extra: "
        "pip install 'mcpkit[pydantic]'\n")


def test_a_module_target_gets_the_same_line(tmp_path: Path) -> None:
    (tmp_path / "rawmod.py").write_text(textwrap.dedent(RAW_INPUT))
    launcher = tmp_path / "hide.py"
    launcher.write_text(f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n" + LAUNCHER)
    done = subprocess.run([sys.executable, str(launcher), "jsonschema", "run", "rawmod"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr == f"mcpkit run: rawmod: function 'count': input schema: {SCHEMA_LINE}\n"


def test_an_openapi_document_without_the_openapi_extra_is_one_line_and_exit_2(
        tmp_path: Path) -> None:
    spec = ROOT / "tests" / "openapi" / "petstore.yaml"
    done = run_hiding("openapi_spec_validator", "run", "--openapi", str(spec), "--base-url",
                      "http://127.0.0.1:1", tmp_path=tmp_path)
    assert done.returncode == 2
    assert done.stderr == ("mcpkit run: an OpenAPI document needs the 'openapi' extra: pip "
                           "install 'mcpkit[openapi]'\n")


def test_an_unrelated_missing_module_is_still_reported_as_it_is(tmp_path: Path) -> None:
    path = server_file(tmp_path, "import no_such_module_here\n")
    done = run_hiding("jsonschema", "run", path, tmp_path=tmp_path)
    assert done.returncode == 2
    assert "No module named 'no_such_module_here'" in done.stderr
    assert "extra" not in done.stderr and "Traceback" not in done.stderr


# -- registration, through the public API ---------------------------------------------------


@pytest.fixture
def no_jsonschema(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)


@pytest.mark.usefixtures("no_jsonschema")
def test_registering_a_raw_schema_raises_missing_extra_naming_the_tool() -> None:
    server = Server("raw", "1.0.0")

    def count(n: int) -> str:
        return str(n)

    with pytest.raises(MissingExtraError) as caught:
        server.tool(input_schema={"type": "object"})(count)
    error = caught.value
    assert str(error).endswith(f".count': input schema: {SCHEMA_LINE}"), str(error)
    assert str(error).startswith("function 'test_registering_a_raw_schema")
    assert (error.extra, error.name) == ("schema", "jsonschema")
    assert isinstance(error, ImportError)  # code catching ImportError keeps working


async def test_typed_tools_need_no_extra_to_register_and_be_called(
        monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = WireRecorder()
    with monkeypatch.context() as hidden:
        hidden.setitem(sys.modules, "jsonschema", None)
        hidden.setitem(sys.modules, "pydantic", None)
        server = Server("typed", "1.0.0")

        @server.tool()
        def add(a: int, b: int) -> dict[str, int]:
            return {"sum": a + b}

        async with connect(server, json=True, recorder=recorder) as client:
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result["structuredContent"] == {"sum": 5}
            refused = await client.call_tool("add", {"a": "x", "b": 3})
            assert refused["isError"] is True  # by the compiled checkers, not jsonschema
            assert "arguments.a" in refused["content"][0]["text"]
    # The official schema's own validator needs jsonschema: the wire is checked once it is back.
    methods: dict[Any, str] = {}
    for direction, message in recorder.messages:
        if direction == "send":
            check_client_message(MODERN, message)
            if "id" in message and "method" in message:
                methods[message["id"]] = message["method"]
        else:
            check_server_message(MODERN, message, methods.get(message.get("id")))
    assert len(recorder.received) >= 2


# -- the client degrades, and says so once --------------------------------------------------

META_INVALID = {"name": "t", "inputSchema": {"type": "object", "minProperties": "many"}}
TOO_DEEP = {"name": "t", "inputSchema": {"type": "object", "$ref": "https://example.com/s"}}


def test_vetting_checks_the_meta_schema_when_jsonschema_is_there() -> None:
    assert "not a valid JSON Schema" in (vet_tool(META_INVALID) or "")


@pytest.mark.usefixtures("no_jsonschema")
def test_vetting_without_jsonschema_keeps_the_structural_checks() -> None:
    assert vet_tool(META_INVALID) is None
    assert "points outside the schema" in (vet_tool(TOO_DEEP) or "")


@pytest.mark.usefixtures("no_jsonschema")
def test_unchecked_output_is_said_once_naming_the_extra(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    import mcpkit.client.tools as tools

    monkeypatch.setattr(tools, "_unchecked_said", False)
    tool = {"name": "t", "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}
    result = {"content": [], "structuredContent": {"n": "not a number"}}
    with caplog.at_level(logging.WARNING, logger="mcpkit.client"):
        OutputChecker().check(tool, result)
        OutputChecker().check(tool, result)
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1
    assert "not checked against outputSchema" in said[0]
    assert "needs the 'schema' extra: pip install 'mcpkit[schema]'" in said[0]


# -- the module -----------------------------------------------------------------------------


def test_require_returns_an_installed_module() -> None:
    assert require("jsonschema", "checking").__name__ == "jsonschema"
    assert available("jsonschema")


@pytest.mark.usefixtures("no_jsonschema")
def test_require_of_a_hidden_module_is_the_one_line() -> None:
    assert not available("jsonschema")
    with pytest.raises(MissingExtraError, match=r"^checking needs the 'schema' extra: "
                       r"pip install 'mcpkit\[schema\]'$"):
        require("jsonschema", "checking")


def test_a_broken_install_says_what_failed_and_still_names_the_extra() -> None:
    error = missing_extra(ModuleNotFoundError("No module named 'rpds'", name="rpds"),
                          "checking", "schema")
    assert str(error) == ("checking needs the 'schema' extra: pip install 'mcpkit[schema]' "
                          "(importing it failed: No module named 'rpds')")


def test_only_optional_modules_are_required_by_extra() -> None:
    with pytest.raises(KeyError, match="not an optional dependency"):
        require("httpx", "serving")  # a base dependency: its absence is a broken install
    # Every extra named is one pyproject.toml declares.
    import tomllib
    from pathlib import Path

    declared = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    assert set(EXTRAS.values()) <= set(declared["project"]["optional-dependencies"]) - {
        "all", "test", "http", "crypto"}


def test_explain_leaves_other_errors_alone() -> None:
    assert explain(ValueError("x")) is None
    assert explain(ModuleNotFoundError("No module named 'foo'", name="foo")) is None
    line = explain(ModuleNotFoundError("No module named 'pydantic'", name="pydantic"))
    assert str(line) == "importing pydantic needs the 'pydantic' extra: pip install 'mcpkit[pydantic]'"


def test_every_extra_named_is_one_pyproject_declares() -> None:
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = declared["optional-dependencies"]
    for module, extra in EXTRAS.items():
        assert extra in extras, f"{module}: no extra {extra!r} in pyproject.toml"
        names = [req.split(">")[0].split(";")[0].strip() for req in extras[extra]]
        # A distribution names its module with dots or underscores for its dashes (PyYAML's
        # is the one whose module is named otherwise).
        spelled = {n.replace("-", sep).lower() for n in names for sep in ".-_"}
        spelled |= {"yaml"} if "pyyaml" in spelled else set()
        assert any(name.startswith(module) for name in spelled), (module, extras[extra])
    base = " ".join(declared["dependencies"])
    for needed in ("uvicorn", "httpx", "cryptography", "orjson"):
        assert needed in base
