"""Hypothesis strategies for what a peer may send: any JSON value, and JSON-RPC objects that
are almost right (each member present or not, of the right type or of any other).

Shared by the property tests of tests/fuzz. A near miss finds more than random JSON: a
random object is refused at its first check, while one with a valid `jsonrpc`, a known method
and a wrong `params` reaches the code behind those checks, where a field read without a
type check raises TypeError or KeyError.
"""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import strategies as st

from mcpkit.types.constants import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROGRESS_TOKEN_KEY,
    PROTOCOL_VERSION_KEY,
    SUBSCRIPTION_ID_KEY,
)
from mcpkit.types.methods import METHODS

__all__ = [
    "ANY_ID",
    "METHOD_NAMES",
    "json_objects",
    "json_values",
    "meta_objects",
    "mostly_valid_requests",
    "near_miss_messages",
    "near_miss_params",
]

METHOD_NAMES = sorted(METHODS)
"""Every method of both eras, so a near miss reaches each method's own checks."""

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_KEYS = st.text(max_size=8) | st.sampled_from(
    ["_meta", "name", "uri", "arguments", "requestState", "inputResponses", "cursor", "id",
     "progressToken", "requestId", "reason", "level", "code", "message", "data"]
)


@functools.cache
def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Any JSON value orjson can write (integers within 64 bits, finite floats); one strategy
    per size, since a composite that draws from it would otherwise rebuild and revalidate it at
    every draw."""
    return st.recursive(
        _SCALARS,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
        max_leaves=max_leaves,
    )


def json_objects() -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(_KEYS, json_values(6), max_size=5)


def _maybe(key: str, value: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """`{key: value}` or `{}`: each member is present or absent."""
    return st.one_of(st.just({}), value.map(lambda v: {key: v}))


ANY_ID = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.text(max_size=6),
    st.just(1),
    st.just("1"),
    st.sampled_from([1.0, True, False, None, [1], {"id": 1}]),
)
"""Ids as a peer may write them: the valid kinds, and values Python takes for 1 (1.0, true)."""


def meta_objects() -> st.SearchStrategy[Any]:
    """A `_meta` that is right, or nearly: each key present or not, well formed or not."""
    version = st.sampled_from(["2026-07-28", "2025-11-25", "2024-11-05", ""]) | json_values(3)
    caps = st.one_of(
        st.just({}), st.just({"elicitation": {}}), st.just({"sampling": {}, "roots": {}}),
        json_values(4),
    )
    info = st.just({"name": "fuzz", "version": "1"}) | json_values(3)
    level = st.sampled_from(["debug", "info", "error", "loud"]) | json_values(2)
    token = st.one_of(st.integers(-(2**63), 2**63 - 1), st.text(max_size=5), json_values(2))
    parts = st.tuples(
        _maybe(PROTOCOL_VERSION_KEY, version), _maybe(CLIENT_CAPABILITIES_KEY, caps),
        _maybe(CLIENT_INFO_KEY, info), _maybe(LOG_LEVEL_KEY, level),
        _maybe(PROGRESS_TOKEN_KEY, token), _maybe(SUBSCRIPTION_ID_KEY, json_values(2)),
        _maybe("traceparent", json_values(2)),
    )
    whole = parts.map(lambda ps: {k: v for p in ps for k, v in p.items()})
    return st.one_of(whole, whole, json_values(4))


def near_miss_params() -> st.SearchStrategy[Any]:
    """Params with a (near) valid `_meta` and the members the methods read, each of any type."""
    names = st.sampled_from(["add", "echo", "fail", "crash", "greet", "nope"]) | json_values(2)
    uris = st.sampled_from(["test://static", "test://item/7/data", "test://none"]) | json_values(2)
    members = st.tuples(
        _maybe("_meta", meta_objects()), _maybe("name", names), _maybe("uri", uris),
        _maybe("arguments", json_values(6)), _maybe("cursor", json_values(2)),
        _maybe("requestState", json_values(2)), _maybe("inputResponses", json_values(4)),
        _maybe("requestId", ANY_ID), _maybe("progressToken", ANY_ID),
        _maybe("level", json_values(2)), _maybe("ref", json_values(4)),
        _maybe("argument", json_values(4)), _maybe("filter", json_values(4)),
    )
    whole = members.map(lambda ps: {k: v for p in ps for k, v in p.items()})
    return st.one_of(whole, whole, whole, json_values(4))


def near_miss_messages() -> st.SearchStrategy[Any]:
    """JSON-RPC messages of every kind, each member right, wrong or missing."""
    jsonrpc = st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2.0, None])
    method = st.sampled_from(METHOD_NAMES) | json_values(2)
    error = st.one_of(
        st.fixed_dictionaries({"code": st.integers(-32800, -32000), "message": st.text(max_size=8)},
                              optional={"data": json_values(4)}),
        json_values(4),
    )
    parts = st.tuples(
        _maybe("jsonrpc", jsonrpc), _maybe("id", ANY_ID), _maybe("method", method),
        _maybe("params", near_miss_params()), _maybe("result", json_values(6)),
        _maybe("error", error),
    )
    whole = parts.map(lambda ps: {k: v for p in ps for k, v in p.items()})
    return st.one_of(whole, whole, whole, json_values(6))


VALID_META = {
    PROTOCOL_VERSION_KEY: "2026-07-28",
    CLIENT_CAPABILITIES_KEY: {},
    CLIENT_INFO_KEY: {"name": "fuzz", "version": "1"},
}


def _arguments() -> st.SearchStrategy[Any]:
    """Arguments for the sample server's tools: the right names, values of any type."""
    values = st.one_of(st.integers(-5, 5), st.text(max_size=5), json_values(3))
    return st.one_of(
        st.fixed_dictionaries({}, optional={"a": values, "b": values, "text": values,
                                            "extra": values}),
        json_values(3),
    )


def mostly_valid_requests(modern: bool) -> st.SearchStrategy[dict[str, Any]]:
    """Requests that pass the envelope most of the time, so the methods' own reading of their
    params is reached: a known method, a valid `_meta` (on a modern connection) most of the
    time, and the members the methods read with the right names and values of any type."""
    meta = st.one_of(st.just(VALID_META), st.just(VALID_META), st.just(VALID_META),
                     meta_objects())
    members = st.fixed_dictionaries({}, optional={
        "name": st.sampled_from(["add", "echo", "fail", "crash", "greet", "nope"]) | json_values(2),
        "uri": st.sampled_from(["test://static", "test://item/7/data", "test://none",
                                "test://item//data"]) | json_values(2),
        "arguments": _arguments(),
        "cursor": st.text(max_size=8) | json_values(2),
        "requestState": st.text(max_size=20) | json_values(2),
        "inputResponses": json_values(4),
        "ref": st.one_of(
            st.fixed_dictionaries({"type": st.sampled_from(["ref/prompt", "ref/resource", "x"]),
                                   "name": st.sampled_from(["greet", "nope"]) | json_values(1),
                                   "uri": st.sampled_from(["test://item/{id}/data"])}),
            json_values(3)),
        "argument": st.one_of(
            st.fixed_dictionaries({"name": st.sampled_from(["name", "id"]) | json_values(1),
                                   "value": st.text(max_size=4) | json_values(1)}),
            json_values(3)),
        "context": json_values(3),
        "level": st.sampled_from(["debug", "error", "nope"]) | json_values(1),
        "filter": json_values(4),
        "notifications": json_values(4),
        "requestId": ANY_ID,
        "progressToken": ANY_ID,
    })
    if modern:
        params = st.tuples(meta, members).map(lambda mp: {"_meta": mp[0], **mp[1]})
    else:
        params = members
    # Now and then params that are no object at all, under an envelope that is otherwise right.
    params = st.one_of(params, params, params, params, params, st.lists(json_values(2)),
                       _SCALARS)
    return st.fixed_dictionaries({
        "jsonrpc": st.just("2.0"),
        "id": st.integers(1000, 10**6) | st.text(min_size=1, max_size=6),
        "method": st.sampled_from(METHOD_NAMES),
        "params": params,
    })
