"""The fake servers, relays and peers the client and CLI tests run as processes."""
