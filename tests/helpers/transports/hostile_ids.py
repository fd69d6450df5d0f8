"""Request ids a peer may send that name no request, shared by the stdio and HTTP tests."""

from __future__ import annotations

import pytest

BAD_REQUEST_IDS = [
    pytest.param([1], id="list"),
    pytest.param({"id": 1}, id="object"),
    pytest.param(1.0, id="float"),
    pytest.param(True, id="bool"),
    pytest.param(None, id="null"),
    pytest.param("x" * 1_000_000, id="huge-string"),
]
"""`requestId`s that name no request. The running request has id 1, so 1.0 and true (equal to
1 in Python, and hashed alike) would cancel it if they were taken for ids."""
