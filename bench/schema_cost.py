#!/usr/bin/env python3
"""What checking an adversarial tool schema costs, at growing sizes.

    python bench/schema_cost.py [--rounds 3] [--sizes 10,20,40]

The two schema walks every tool definition goes through, on the shapes that once cost them far
more than their size: `x-mcp-header` declarations (`mcpkit.protocol.mcp_headers.header_params`)
beside definitions that each refer twice to the next (following the references would visit
2**n subschemas), and the structure check (`mcpkit.schema.walk`) on many references
under one very long property name (spelling each reference's place would copy the name each
time). Each figure is the best of the rounds, in ms; a linear walk grows with the size, not
with its square or its power of two. The tests count the work instead of timing it
(tests/protocol/test_mcp_headers.py, test_schema_walk.py); `tests/bench/test_schema_cost.py`
runs this script without asserting any figure.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

from mcpkit.protocol.mcp_headers import header_params
from mcpkit.schema.walk import Limits, Wording, check_schema_structure

WORDS = Wording(
    too_many="{where}: more than {max_nodes}",
    too_deep="{where}: deeper than {max_depth}",
    outside="{where}: {kind} {keyword} {ref} at {at}",
    no_target="{where}: no target for {keyword} {ref} at {at}",
    no_anchor="{where}: no anchor for {keyword} {ref} at {at}",
)


def shared_defs(n: int) -> dict[str, Any]:
    """`n` definitions, each an `anyOf` of two references to the next."""
    defs: dict[str, Any] = {
        f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
        for i in range(n)
    }
    defs[f"d{n}"] = {"type": "string"}
    return {"type": "object", "properties": {"a": {"$ref": "#/$defs/d0"}}, "$defs": defs}


def long_name(n: int) -> tuple[dict[str, Any], Limits]:
    """`n` * 225 references under a property name of `n` * 10 000 characters."""
    refs = n * 225
    schema = {"properties": {"k" * (n * 10_000): {"allOf": [{"$ref": "#/$defs/a"}] * refs}},
              "$defs": {"a": {}}}
    limits = Limits(max_nodes=refs + 100, max_depth=64, max_fan_out=10 * refs,
                    max_expanded=100 * refs)
    return schema, limits


def best_ms(fn: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main(rounds: int, sizes: list[int]) -> None:
    print(f"ms per check, best of {rounds} rounds ({sys.version.split()[0]})")
    print()
    print("| schema | size | ms |")
    print("|---|---:|---:|")
    for n in sizes:
        schema = shared_defs(n)
        ms = best_ms(lambda schema=schema: header_params(schema), rounds)
        print(f"| x-mcp-header walk, definitions referring twice to the next | {n} | {ms:.3f} |")
    for n in sizes:
        schema, limits = long_name(n)
        ms = best_ms(
            lambda schema=schema, limits=limits: check_schema_structure(
                schema, "S", limits, WORDS), rounds)
        print(f"| structure check, {n * 225} references under a {n * 10_000}-character name "
              f"| {n} | {ms:.3f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="10,20,40")
    args = parser.parse_args()
    main(args.rounds, [int(size) for size in args.sizes.split(",")])
