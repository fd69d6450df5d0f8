"""A relay in front of a real stdio server that slips hostile lines in before an answer.

`python injecting_relay.py` runs `python -m mcpkit run tests/helpers/sample_server.py:SERVER` and
passes every line between its own stdin/stdout and the server's. A `tools/call` of `echo`
whose text starts with `INJECT:` carries a JSON list of strings: the relay writes each as one
line to the client before passing the call on, so the client reads them just before the
answer to that call, exactly where a misbehaving server would write them. Every line the
server itself writes is passed on unchanged (and schema-checked by the client's tap).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "INJECT:"
out_lock = threading.Lock()


def write_out(data: bytes) -> None:
    with out_lock:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def client_side(source: IO[bytes], server_stdin: IO[bytes]) -> None:
    for line in source:
        try:
            message = json.loads(line)
            text = message["params"]["arguments"]["text"]
        except (ValueError, KeyError, TypeError):
            text = None
        if isinstance(text, str) and text.startswith(PREFIX):
            for hostile in json.loads(text[len(PREFIX):]):
                write_out(hostile.encode("utf-8", "surrogatepass") + b"\n")
        server_stdin.write(line)
        server_stdin.flush()
    server_stdin.close()


def main() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", str(ROOT / "tests" / "fuzz" / "stdio_target.py")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT,
    )
    assert proc.stdin is not None and proc.stdout is not None
    threading.Thread(target=client_side, args=(sys.stdin.buffer, proc.stdin), daemon=True).start()
    for line in proc.stdout:
        write_out(line)
    sys.exit(proc.wait())


if __name__ == "__main__":
    main()
