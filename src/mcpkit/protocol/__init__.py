"""The protocol core: rules of the wire with no I/O.

Nothing in this package reads a socket, spawns a process, starts a task, sleeps, reads the clock
or logs: it takes bytes or decoded messages and returns decoded messages, bytes or exceptions.
Time and randomness come in as arguments. It may import `mcpkit.types` and `mcpkit.errors`
only, so every rule here can be tested by replaying recorded messages with no event loop.
"""

__all__: list[str] = []
"""Nothing at the package level: each module names its own public surface, and importing one
rule does not load the others."""
