"""An mcpkit Server whose tool asks a form with every kind of constraint, for the tests of
checking elicitation answers (in memory, and under `mcpkit call` as a real process)."""

from __future__ import annotations

import json
from typing import Any

from mcpkit import Context, Server

PROFILE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 20},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 18, "maximum": 130},
        "plan": {"type": "string", "oneOf": [{"const": "free", "title": "Free"},
                                             {"const": "pro", "title": "Pro"}]},
        "newsletter": {"type": "boolean", "default": False},
        "topics": {"type": "array", "maxItems": 2,
                   "items": {"type": "string", "enum": ["mcp", "python", "rust"]}},
        "starts": {"type": "string", "format": "date"},
    },
    "required": ["name", "email", "age", "plan"],
}

server = Server("form-tests", "1.0.0")


@server.tool()
async def register(ctx: Context) -> str:
    """Asks for a profile and reports what came back."""
    answer = await ctx.elicit("profile", "Your profile, please.", PROFILE)
    if not answer.accepted:
        return f"no profile ({answer.action})"
    return json.dumps(answer.content, sort_keys=True)
