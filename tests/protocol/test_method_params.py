"""Each params shape of the method table (`mcpkit.types.params`, compiled by
`mcpkit.schema.params`) accepts and refuses what the official schema's `*RequestParams`
definition of its method does: over the official examples, and over wrong values put at each
field and at each field one level down. Without the official schema folder (MCPKIT_SPEC_DIR)
the comparison is skipped with a reason that says where it looked (and under CI the run stops,
see wire.py); the checks that need no schema run either way."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.wire import MODERN, SPEC_DIR, SPEC_MISSING, meta, spec_available, validator

from mcpkit.errors import InvalidParamsError
from mcpkit.schema.params import compile_params, params_check
from mcpkit.types.methods import METHODS, Method, MethodInfo

SHAPED = [info for info in METHODS.values() if info.params is not None]
WRONG: list[Any] = [None, True, 7, 2.5, "text", "", [], ["text"], [7], {}, {"x": 7}]
_NULLS = {
    # null taken as absent, as the server always has, where the schema says the field is left
    # out instead.
    (Method.TOOLS_CALL, "arguments"), (Method.PROMPTS_GET, "arguments"),
    (Method.COMPLETE, "context"),
    *((m, "cursor") for m in (Method.TOOLS_LIST, Method.RESOURCES_LIST,
                              Method.RESOURCES_TEMPLATES_LIST, Method.PROMPTS_LIST)),
    *((Method.SUBSCRIPTIONS_LISTEN, f"notifications.{flag}") for flag in (
        "toolsListChanged", "promptsListChanged", "resourcesListChanged",
        "resourceSubscriptions")),
}
_ROUNDS = {
    # Checked, in words that name the question they answer, by the round of a target that
    # asks (server/mrtr.py), when it asks; a target that never asks ignores them.
    (m, key) for m in (Method.TOOLS_CALL, Method.PROMPTS_GET, Method.RESOURCES_READ)
    for key in ("inputResponses", "requestState")
}


def tolerated(method: str, where: str, value: Any) -> bool:
    """Where our shape knowingly accepts more than the official definition."""
    if (method, where) in _NULLS:
        return value is None
    return (method, where) in _ROUNDS


needs_spec = pytest.mark.skipif(not spec_available(), reason=SPEC_MISSING)


def definitions() -> dict[str, Any]:
    schema = json.loads((SPEC_DIR / f"schema-{MODERN}.json").read_text(encoding="utf-8"))
    defs: dict[str, Any] = schema["$defs"]
    return defs


def params_definition(info: MethodInfo) -> str:
    ref: str = definitions()[info.message_type]["properties"]["params"]["$ref"]
    return ref.rsplit("/", 1)[-1]


def accepts(info: MethodInfo, params: dict[str, Any]) -> bool:
    check = params_check(info)
    if check is None:
        return True
    try:
        check(params)
    except InvalidParamsError:
        return False
    return True


def examples(info: MethodInfo) -> list[dict[str, Any]]:
    """The official examples of the method's params: its request's, and its params type's."""
    folder = SPEC_DIR / f"examples-{MODERN}"
    requests = sorted((folder / info.message_type).glob("*.json"))
    shapes = sorted((folder / params_definition(info)).glob("*.json"))
    return [json.loads(p.read_text(encoding="utf-8"))["params"] for p in requests] + [
        json.loads(p.read_text(encoding="utf-8")) for p in shapes]


def variants(params: dict[str, Any], schema: dict[str, Any]
             ) -> Iterator[tuple[str, dict[str, Any]]]:
    """`params` with each field left out or made wrong, and each field's own fields too."""
    defs = definitions()

    def resolved(node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[-1]]
        return node

    def walk(holder: dict[str, Any], node: dict[str, Any], path: str, root: dict[str, Any]
             ) -> Iterator[tuple[str, dict[str, Any]]]:
        for key, sub in resolved(node).get("properties", {}).items():
            if key == "_meta":
                continue  # the envelope's (protocol/envelope.read_meta), not the table's
            where = f"{path}{key}"
            if key in holder:
                gone = copy.deepcopy(root)
                del _at(gone, path)[key]
                yield where, gone
            for value in WRONG:
                changed = copy.deepcopy(root)
                _at(changed, path)[key] = value
                yield where, changed
            inner = holder.get(key)
            if isinstance(inner, dict) and "properties" in resolved(sub) and not path:
                yield from walk(inner, resolved(sub), f"{key}.", root)

    yield from walk(params, schema, "", params)


def _at(params: dict[str, Any], path: str) -> dict[str, Any]:
    for key in filter(None, path.split(".")):
        params = params[key]
    return params


@needs_spec
@pytest.mark.parametrize("info", SHAPED, ids=lambda m: m.name)
def test_each_params_shape_accepts_the_official_examples(info: MethodInfo) -> None:
    official = validator(MODERN, params_definition(info))
    found = examples(info) or [{"_meta": meta()}]
    for params in found:
        assert official.is_valid(params), params
        assert accepts(info, params), params


@needs_spec
@pytest.mark.parametrize("info", SHAPED, ids=lambda m: m.name)
def test_each_params_shape_refuses_what_the_official_definition_refuses(
    info: MethodInfo,
) -> None:
    official = validator(MODERN, params_definition(info))
    schema = definitions()[params_definition(info)]
    compared = 0
    for params in examples(info) or [{"_meta": meta()}]:
        for where, changed in variants(params, schema):
            theirs, ours = official.is_valid(changed), accepts(info, changed)
            compared += 1
            if theirs == ours:
                continue
            parent, _, key = where.rpartition(".")
            assert not ours or tolerated(info.name, where, _at(changed, parent).get(key)), (
                f"{info.name} {where}: the official schema "
                f"{'accepts' if theirs else 'refuses'} {changed!r}; ours "
                f"{'accepts' if ours else 'refuses'} it")
    if schema.get("properties", {}).keys() - {"_meta"}:
        assert compared > 0


def test_every_request_a_server_serves_from_the_core_table_has_a_params_shape() -> None:
    served = {n for n, m in METHODS.items()
              if m.is_request and m.by_client and m.modern and m.extension is None}
    assert served == {m.name for m in SHAPED}


def test_a_refusal_names_the_method_its_target_the_path_and_what_the_field_holds() -> None:
    check = params_check(METHODS[Method.TOOLS_CALL])
    assert check is not None
    with pytest.raises(InvalidParamsError) as caught:
        check({"name": "add", "arguments": [1, 2]})
    assert str(caught.value) == (
        "tools/call 'add': params.arguments: expected object, got array "
        "(an object of the tool's arguments)")
    with pytest.raises(InvalidParamsError) as caught:
        check({"arguments": {}})
    assert str(caught.value) == (
        "tools/call: params.name: missing required property (the tool's name)")


def test_every_wrong_place_is_named_in_one_refusal() -> None:
    check = params_check(METHODS[Method.COMPLETE])
    assert check is not None
    with pytest.raises(InvalidParamsError) as caught:
        check({"ref": {"type": "ref/tool", "name": "x"}, "argument": {"name": 1}})
    message = str(caught.value)
    assert message.startswith("completion/complete: params.ref: expected PromptReference "
                              "object or ResourceTemplateReference object, got object")
    assert "params.argument.name: expected string, got integer 1" in message
    assert "params.argument.value: missing required property" in message


def test_a_params_check_leaves_the_params_as_they_came() -> None:
    check = params_check(METHODS[Method.TOOLS_CALL])
    assert check is not None
    params = {"name": "add", "arguments": {"a": 3.0, "b": [1]}, "extra": True}
    before = copy.deepcopy(params)
    check(params)
    assert params == before and type(params["arguments"]["a"]) is float


def test_a_shape_that_is_not_a_typeddict_is_refused_when_compiled() -> None:
    with pytest.raises(TypeError, match="x/y: a params shape is a TypedDict"):
        compile_params("x/y", dict)
