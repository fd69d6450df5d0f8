"""A server whose code writes to stdout in every way it can; none of it may reach the wire."""

import logging
import os
import sys
import warnings

print("printed at import")
os.write(1, b"raw write to fd 1 at import\n")
logging.basicConfig(stream=sys.stdout, level=logging.INFO)
logging.info("logged to sys.stdout at import")

from mcpkit import Server  # noqa: E402

server = Server("noisy", "1.0.0")


@server.tool()
def shout(text: str) -> str:
    """Prints, writes to fd 1 and warns before answering."""
    print("printed in a tool:", text)
    sys.stdout.write("sys.stdout.write in a tool\n")
    sys.stdout.flush()
    os.write(1, b"raw write in a tool\n")
    warnings.warn("a warning in a tool", stacklevel=1)
    return text.upper()


@server.tool()
async def wait(seconds: float) -> str:
    """Sleeps, to test concurrency and cancellation."""
    import asyncio

    await asyncio.sleep(seconds)
    return f"waited {seconds}"
