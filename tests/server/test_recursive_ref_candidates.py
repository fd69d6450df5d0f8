"""A `$recursiveRef` may be answered by any subschema declaring `"$recursiveAnchor": true`, so
each of them counts when a loop is looked for: the server refuses such a schema at registration
and the client refuses a tool that sends one, before any validator can recurse without end."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import Server
from mcpkit.client.tools import vet_tool

DRAFT_2019 = "https://json-schema.org/draft/2019-09/schema"
# /properties/p refers (statically) to the root, which descends into a property: no loop. But
# /$defs/x, declaring a recursive anchor, may answer that $recursiveRef too, and it refers back
# to /properties/p for the same value: x -> p -> x, never descending.
LOOP_THROUGH_AN_ANCHOR: dict[str, Any] = {
    "$schema": DRAFT_2019,
    "type": "object",
    "properties": {"p": {"$recursiveRef": "#"}},
    "$defs": {"x": {"$recursiveAnchor": True, "anyOf": [{"$ref": "#/properties/p"}]}},
}
# The same without the anchor: /$defs/x is an ordinary definition and nothing loops.
NO_ANCHOR: dict[str, Any] = {
    **LOOP_THROUGH_AN_ANCHOR,
    "$defs": {"x": {"anyOf": [{"$ref": "#/properties/p"}]}},
}


def lookup(p: Any = None) -> None:
    """Takes anything the schema allows."""


def test_the_server_refuses_a_loop_through_a_recursive_anchor_at_registration() -> None:
    with pytest.raises(ValueError) as caught:
        Server("s").tool(input_schema=LOOP_THROUGH_AN_ANCHOR)(lookup)
    message = str(caught.value)
    assert message.startswith("function 'lookup': input schema: $ref '#/properties/p' at "
                              "/$defs/x/anyOf/0/$ref leads back to where it started")
    assert "would never end" in message


def test_the_client_refuses_a_tool_whose_schema_loops_through_a_recursive_anchor() -> None:
    reason = vet_tool({"name": "t", "inputSchema": LOOP_THROUGH_AN_ANCHOR})
    assert reason is not None
    assert reason.startswith("inputSchema: $ref '#/properties/p' at /$defs/x/anyOf/0/$ref "
                             "leads back to where it started")


def test_without_the_anchor_the_same_schema_is_accepted_on_both_sides() -> None:
    Server("s").tool(input_schema=NO_ANCHOR)(lookup)
    assert vet_tool({"name": "t", "inputSchema": NO_ANCHOR}) is None
