"""The wire vocabulary: method names, `_meta` keys, protocol versions and wire shapes.

Everything here is data. No module of mcpkit's is imported from here, and nothing here does
I/O, so every other layer may depend on it. Method names (made by the method table,
`mcpkit.types.methods`), header names and `_meta` keys are defined once, in this package, and
referred to by name everywhere else.
"""

from mcpkit.types.constants import *  # noqa: F403
from mcpkit.types.constants import __all__ as _constants_all
from mcpkit.types.era import ERAS, LEGACY, MODERN, Era
from mcpkit.types.methods import Method

__all__ = [
    *_constants_all,
    "ERAS",
    "LEGACY",
    "MODERN",
    "Era",
    "Method",
]
