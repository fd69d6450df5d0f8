"""Runs a stdio server command behind a relay that holds the client's first line until its
second one arrives, then passes both on in order: a real server too slow to answer the first
request (the `server/discover` probe) before the client's next one. Everything else passes as
it comes, both ways. `python holding_relay.py COMMAND...`."""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import IO


def pump(source: IO[bytes], sink: IO[bytes]) -> None:
    for line in source:
        sink.write(line)
        sink.flush()
    sink.close()


def main() -> None:
    child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    threading.Thread(target=pump, args=(child.stdout, sys.stdout.buffer), daemon=True).start()
    first: bytes | None = None
    released = False
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        if not released and first is None:
            first = line  # the probe: held until the next line comes
            continue
        if not released and first is not None:
            child.stdin.write(first)
            released = True
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()
    sys.exit(child.wait())


if __name__ == "__main__":
    main()
