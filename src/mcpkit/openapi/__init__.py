"""REST APIs as MCP servers: an OpenAPI 3.0 or 3.1 document's operations as tools, resources
and resource templates, each call an HTTP request to the API.

Built on the public core `Server` (it registers through `add_tool`, `add_resource` and
`add_resource_template`) and the schema floor below it; nothing below knows this package
exists. `mcpkit.Server.from_openapi` and `from_fastapi` are its one-line faces, and `mcpkit
run --openapi SPEC` its command line.

```
  bridge.py      add_openapi: each operation named, routed and registered (the public face)
    |-- documents.py   reading a document within bounds, its $refs and its validity
    |-- refs.py        following a $ref to what it names
    |-- operations.py  the operations, their merged parameters, their unique names, the rules
    |-- options.py     OpenAPIOptions and Rule
    |-- inputs.py      parameters and request body -> input schema + where each argument goes
    |-- dialect.py     OpenAPI 3.0 / 3.1 Schema Objects -> JSON Schema 2020-12 with $defs
    |-- styles.py      a parameter's value as its style writes it (no I/O)
    |-- requests.py    checked arguments -> the HTTP request (no I/O)
    |-- calls.py       sending it and reading the answer within the time and size bounds
    `-- outputs.py     2xx responses -> output schema; an answer -> a result or a tool error
  fastapi.py     a FastAPI application's routes over ASGI, no network hop
```

The document is validated by openapi-spec-validator and YAML read by PyYAML, both of the
`openapi` extra (`pip install 'mcpkit[openapi]'`), imported when a document is read: without
the extra, that is one `MissingExtraError` line, before anything is served.
"""

from __future__ import annotations

from mcpkit.openapi.bridge import Bridged, add_openapi
from mcpkit.openapi.documents import Document, OpenAPIError, load_document
from mcpkit.openapi.fastapi import add_fastapi, asgi_client
from mcpkit.openapi.options import OpenAPIOptions, Route, Rule

__all__ = [
    "Bridged",
    "Document",
    "OpenAPIError",
    "OpenAPIOptions",
    "Route",
    "Rule",
    "add_fastapi",
    "add_openapi",
    "asgi_client",
    "load_document",
]
