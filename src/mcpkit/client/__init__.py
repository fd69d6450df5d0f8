"""The mcpkit client."""
