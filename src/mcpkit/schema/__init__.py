"""All JSON Schema work: the dialects we accept, the one walk of a schema's structure, type hints
made into schemas and compiled checkers, raw schemas checked within a budget, and the restricted
elicitation form schema.

A floor below `server/` and `client/` (which both use it) and above `protocol/`: it may import
`mcpkit.types`, `mcpkit.errors` and `mcpkit.protocol` only. Like the protocol core it does no
I/O, starts no task or thread, reads no clock and logs nothing: a caller that wants a wall-clock
budget passes its clock in (`derive_signature(..., clock=time.monotonic)`), and a caller that
wants to log a refusal gets it back as a value or an exception.

```
  functions.py    a function -> input/output schema and an argument checker (public face)
    |-- hints.py        what an annotation says: Annotated metadata and `Param`, Optional,
    |                   a class's fields
    |-- limits.py       pydantic `Field` and annotated_types limits: their keywords, their check
    |-- compiler.py     one annotation -> schema fragment + checker (`Compiler`)
    |-- defs.py         the `$defs` table the nested classes of one schema share
    |-- docstrings.py   descriptions from a function's docstring
    |-- checkers.py     the compiled checker closures (primitives, unions, arrays, objects,
    |                   pydantic models)
    |-- validators.py   the per-call validators: arguments, a typed tool's structured content
    |-- problems.py     `ArgumentsError` and how a problem names a place and a value
    |-- values.py       Python values as plain JSON data (return values, defaults)
    `-- raw.py          a user's raw JSON Schema: dialect, validity, a per-call budget
          `-- bounds.py     the server's limits and words for a raw schema
  walk.py         the one walk of a schema's structure ($refs, size, depth, fan-out), each
                  side with its own `Limits` and `Wording` (server: bounds.py; client/tools.py)
    |-- places.py       where each dialect puts subschemas, ids and anchors
    |-- graph.py        reachability, loops and expansion of the reference graph
    `-- dialects.py     the dialects accepted (JSS-1..3) and their validator names
  forms.py        form-mode elicitation: the restricted form schema, no secrets in forms,
                  reading the answers (built from types through functions.py)
```

Importing this package loads neither pydantic nor `jsonschema`.
"""

from __future__ import annotations

from mcpkit.schema.compiler import Compiler
from mcpkit.schema.dialects import DEFAULT_DIALECT, SUPPORTED_DIALECTS, dialect_of, validator_name
from mcpkit.schema.forms import Form, form_of
from mcpkit.schema.functions import (
    ArgumentsError,
    Param,
    ParameterInfo,
    Signature,
    derive_signature,
    describe_parameters,
)
from mcpkit.schema.places import places_of
from mcpkit.schema.problems import json_type
from mcpkit.schema.validators import compile_output
from mcpkit.schema.values import output_to_json
from mcpkit.schema.walk import check_schema_structure
from mcpkit.schema.walked import Limits, Wording

__all__ = [
    "DEFAULT_DIALECT",
    "SUPPORTED_DIALECTS",
    "ArgumentsError",
    "Compiler",
    "Form",
    "Limits",
    "Param",
    "ParameterInfo",
    "Signature",
    "Wording",
    "check_schema_structure",
    "compile_output",
    "derive_signature",
    "describe_parameters",
    "dialect_of",
    "form_of",
    "json_type",
    "output_to_json",
    "places_of",
    "validator_name",
]
