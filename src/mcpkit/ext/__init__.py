"""Extensions built on the public extension API: each a package of its own (`apps`, ...).

Nothing is imported here, so `import mcpkit.ext.apps` loads only what MCP Apps needs.
"""

__all__: list[str] = []
