from __future__ import annotations

import pytest

from mcpkit.errors import InvalidParamsError
from mcpkit.protocol.cursor import decode_cursor, encode_cursor


def test_cursor_round_trips() -> None:
    assert decode_cursor("tools/list", encode_cursor(200, 3), 3) == 200


@pytest.mark.parametrize("cursor", ["", "!!!", "bm9wZQ", 5, None, "LTE6LTE"])
def test_garbage_cursor_is_invalid_params(cursor: object) -> None:
    with pytest.raises(InvalidParamsError, match="cursor"):
        decode_cursor("tools/list", cursor, 0)


def test_cursor_from_an_older_list_is_refused() -> None:
    with pytest.raises(InvalidParamsError, match="list changed"):
        decode_cursor("prompts/list", encode_cursor(100, 1), 2)
