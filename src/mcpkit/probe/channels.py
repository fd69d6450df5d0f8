"""Raw channels to the server under probe: one JSON-RPC request out, what came back recorded.

The client's transports keep a server's mistakes away from the application (a stray stdout line
is logged once, a malformed answer becomes an exception, a request without `_meta` is never
sent). The probe needs the opposite: to send what a client never would and to keep every
answer as evidence. So it speaks through two small channels of its own:

- `LineChannel`: the server as a child process, one line per message on its stdin and stdout
  (framed by `mcpkit.protocol.framing.LineReader`), every stdout line that is not a JSON-RPC
  message counted with its first bytes kept;
- `HTTPChannel`: httpx directly, so a request can carry a wrong header or an evil `Origin`, and
  the status and the media type of each answer are kept beside its body (JSON or SSE).

Each request returns an `Exchange`: what was sent, the headers, the status, the response
message or None, and a note when nothing came (a timeout, the process ended). A channel never
raises for what the server does; only a target that cannot be reached at all is an error
(`TransportError`). A tap, when given, sees every message sent and received, with a flag marking the
requests the probe sends wrong on purpose (tests validate all others against the schema).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from mcpkit.errors import TransportError
from mcpkit.protocol.framing import LineReader, Oversized, SSEDecoder
from mcpkit.types.constants import PROTOCOL_VERSION_KEY, Header
from mcpkit.types.methods import Method

__all__ = [
    "Channel",
    "Exchange",
    "HTTPChannel",
    "LineChannel",
    "Tap",
    "Target",
]

Tap = Callable[[str, dict[str, Any], bool], None]
"""(direction "send" | "receive", message, deliberate: sent malformed on purpose)."""

MAX_BODY = 16 * 1024 * 1024
"""The largest HTTP answer read; a catalogue bigger than this is not a catalogue."""
_STRAY_KEPT = 5
"""Stray stdout lines kept as examples (all are counted)."""


@dataclass(frozen=True, slots=True)
class Target:
    """What to probe: a command line run over stdio, or an HTTP URL."""

    kind: str
    """`"stdio"` or `"http"`."""
    argv: tuple[str, ...] = ()
    url: str = ""
    env: Mapping[str, str] | None = None
    headers: Mapping[str, str] | None = None

    @property
    def shown(self) -> str:
        return self.url if self.kind == "http" else shlex.join(self.argv)


@dataclass(slots=True)
class Exchange:
    """One request and what came back: the evidence a check or an era step cites."""

    sent: dict[str, Any]
    response: dict[str, Any] | None
    status: int | None = None
    """The HTTP status; None on stdio."""
    headers: dict[str, str] = field(default_factory=dict)
    """The HTTP headers sent (lower-case names)."""
    reply_headers: dict[str, str] = field(default_factory=dict)
    note: str = ""
    """Why there is no response: "no answer within 10 s", "the process exited", ..."""

    @property
    def error(self) -> dict[str, Any] | None:
        error = self.response.get("error") if self.response is not None else None
        return error if type(error) is dict else None

    @property
    def result(self) -> dict[str, Any] | None:
        result = self.response.get("result") if self.response is not None else None
        return result if type(result) is dict else None

    @property
    def code(self) -> int | None:
        code = self.error.get("code") if self.error is not None else None
        return code if type(code) is int else None


class Channel(Protocol):
    kind: str
    stray: int
    """Lines on stdout that were no JSON-RPC message (stdio; always 0 on HTTP)."""
    stray_examples: list[str]

    @property
    def ended(self) -> bool:
        """Whether the server is gone (a stdio process that closed its stdout)."""

    async def request(self, message: dict[str, Any], timeout: float, *,
                      deliberate: bool = False) -> Exchange: ...

    async def notify(self, message: dict[str, Any]) -> None: ...

    async def close(self) -> None: ...


def _answer_server_request(message: dict[str, Any]) -> dict[str, Any]:
    """What the probe answers a request the server sends (legacy era): a ping and an empty list
    of roots, and -32601 for what would need a person (elicitation, sampling)."""
    method = message.get("method")
    if method == Method.PING:
        result: dict[str, Any] | None = {}
    elif method == Method.ROOTS_LIST:
        result = {"roots": []}
    else:
        result = None
    if result is not None:
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}
    return {"jsonrpc": "2.0", "id": message["id"],
            "error": {"code": -32601, "message": f"mcpkit probe does not answer {method}"}}


class LineChannel:
    """A stdio server started for the probe; `close()` ends it (stdin, SIGTERM, SIGKILL)."""

    kind = "stdio"

    def __init__(self, proc: asyncio.subprocess.Process, tap: Tap | None) -> None:
        self.proc = proc
        self.tap = tap
        self.stray = 0
        self.stray_examples: list[str] = []
        self._waiting: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._ended = asyncio.get_running_loop().create_future()
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, target: Target, tap: Tap | None = None) -> LineChannel:
        env = {**os.environ, **target.env} if target.env else None
        try:
            proc = await asyncio.create_subprocess_exec(
                *target.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL, env=env, start_new_session=os.name == "posix",
            )
        except OSError as exc:
            raise TransportError(f"could not start {target.shown!r}: {exc.strerror or exc} (check "
                             "the command and that the program is on PATH)") from None
        return cls(proc, tap)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        reader = LineReader()
        try:
            while chunk := await self.proc.stdout.read(65536):
                for line in reader.feed(chunk):
                    self._line(line)
            for line in reader.close():
                self._line(line)
        finally:
            if not self._ended.done():
                self._ended.set_result(None)

    def _line(self, line: bytes | Oversized) -> None:
        message: Any = None
        if not isinstance(line, Oversized):
            with contextlib.suppress(orjson.JSONDecodeError):
                message = orjson.loads(line)
        if type(message) is not dict or message.get("jsonrpc") != "2.0":
            self.stray += 1
            if len(self.stray_examples) < _STRAY_KEPT:
                shown = (f"<a {line.size}-byte line>" if isinstance(line, Oversized)
                         else line[:120].decode("utf-8", "replace"))
                self.stray_examples.append(shown)
            return
        if self.tap is not None:
            self.tap("receive", message, False)
        if "method" in message:
            if "id" in message:
                self._write(_answer_server_request(message), False)
            return
        waiter = self._waiting.pop(message.get("id"), None)
        if waiter is not None and not waiter.done():
            waiter.set_result(message)

    def _write(self, message: dict[str, Any], deliberate: bool) -> None:
        if self.tap is not None:
            self.tap("send", message, deliberate)
        stdin = self.proc.stdin
        if stdin is None or stdin.is_closing():
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            stdin.write(orjson.dumps(message) + b"\n")

    async def request(self, message: dict[str, Any], timeout: float, *,
                      deliberate: bool = False) -> Exchange:
        waiter = asyncio.get_running_loop().create_future()
        self._waiting[message["id"]] = waiter
        if self._ended.done():
            self._waiting.pop(message["id"], None)
            return Exchange(message, None, note=self._gone())
        self._write(message, deliberate)
        done, _ = await asyncio.wait({waiter, self._ended}, timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        self._waiting.pop(message["id"], None)
        if waiter in done:
            return Exchange(message, waiter.result())
        waiter.cancel()
        if self._ended.done():
            return Exchange(message, None, note=self._gone())
        return Exchange(message, None, note=f"no answer within {timeout:g} s")

    @property
    def ended(self) -> bool:
        return self._ended.done()

    def _gone(self) -> str:
        code = self.proc.returncode
        return "the server closed its stdout" if code is None else f"the server exited ({code})"

    async def notify(self, message: dict[str, Any]) -> None:
        self._write(message, False)

    async def close(self) -> None:
        stdin = self.proc.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        for sig in (None, signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
            if sig is not None and self.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    if os.name == "posix":
                        os.killpg(self.proc.pid, sig)
                    else:  # pragma: no cover - POSIX in the tests
                        self.proc.send_signal(sig)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), 2.0)
                break
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader


def modern_headers(message: Mapping[str, Any]) -> dict[str, str]:
    """The request-metadata headers a modern POST mirrors from its body (HTTP-10)."""
    from mcpkit.protocol.mcp_headers import encode_header_value

    headers: dict[str, str] = {}
    params = message.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    version = meta.get(PROTOCOL_VERSION_KEY) if type(meta) is dict else None
    if type(version) is str:
        headers[Header.PROTOCOL_VERSION] = version
    method = message.get("method")
    if type(method) is str:
        headers[Header.METHOD] = method
    name = None
    if type(params) is dict:
        name = params.get("uri") if method == Method.RESOURCES_READ else params.get("name")
    if type(name) is str and method in (Method.RESOURCES_READ, Method.TOOLS_CALL,
                                        Method.PROMPTS_GET):
        headers[Header.NAME] = encode_header_value(name)
    return headers


class HTTPChannel:
    """A Streamable HTTP endpoint, reached with httpx; keeps a legacy session's id once given."""

    kind = "http"
    stray = 0

    def __init__(self, target: Target, tap: Tap | None) -> None:
        import httpx

        self.url = target.url
        self.tap = tap
        self.stray_examples: list[str] = []
        self.base_headers = dict(target.headers or {})
        self.session_id: str | None = None
        self.legacy_version: str | None = None
        self.client = httpx.AsyncClient(follow_redirects=False, trust_env=False)

    @property
    def ended(self) -> bool:
        return False

    def headers_for(self, message: Mapping[str, Any]) -> dict[str, str]:
        headers = {"accept": "application/json, text/event-stream",
                   "content-type": "application/json", **self.base_headers}
        if self.session_id is not None:
            headers[Header.SESSION_ID] = self.session_id
        if self.legacy_version is not None:
            headers[Header.PROTOCOL_VERSION] = self.legacy_version
        else:
            headers.update(modern_headers(message))
        return headers

    async def request(self, message: dict[str, Any], timeout: float, *,
                      deliberate: bool = False, headers: dict[str, str] | None = None) -> Exchange:
        """POST one request; `headers` replaces the computed ones (for the header checks)."""
        sent = headers if headers is not None else self.headers_for(message)
        if self.tap is not None:
            self.tap("send", message, deliberate)
        exchange = Exchange(message, None, headers=sent)
        try:
            async with asyncio.timeout(timeout):
                await self._post(message, sent, exchange)
        except TimeoutError:
            exchange.note = f"no answer within {timeout:g} s"
        except TransportError as exc:
            exchange.note = str(exc)
        if exchange.response is not None and self.tap is not None:
            self.tap("receive", exchange.response, False)
        session = exchange.reply_headers.get(Header.SESSION_ID)
        if message.get("method") == Method.INITIALIZE and session:
            self.session_id = session
        return exchange

    async def _post(self, message: dict[str, Any], headers: dict[str, str],
                    exchange: Exchange) -> None:
        import httpx

        try:
            async with self.client.stream("POST", self.url, content=orjson.dumps(message),
                                          headers=headers) as reply:
                exchange.status = reply.status_code
                exchange.reply_headers = {k.lower(): v for k, v in reply.headers.items()}
                media = reply.headers.get("content-type", "").split(";")[0].strip().lower()
                if media == "text/event-stream":
                    exchange.response = await self._from_stream(reply, message.get("id"))
                else:
                    body = await self._body(reply)
                    exchange.response = _json_message(body)
                    if exchange.response is None and body:
                        exchange.note = f"a {media or 'untyped'} body that is no JSON-RPC message"
        except httpx.HTTPError as exc:
            raise TransportError(f"POST {self.url}: {type(exc).__name__}: {exc}") from None

    async def _body(self, reply: Any) -> bytes:
        body = bytearray()
        async for chunk in reply.aiter_bytes():
            body += chunk
            if len(body) > MAX_BODY:
                raise TransportError(f"the answer is over {MAX_BODY} bytes")
        return bytes(body)

    async def _from_stream(self, reply: Any, request_id: Any) -> dict[str, Any] | None:
        decoder = SSEDecoder()
        seen = 0
        async for chunk in reply.aiter_bytes():
            seen += len(chunk)
            if seen > MAX_BODY:
                raise TransportError(f"the event stream is over {MAX_BODY} bytes")
            for _, data, _, _ in decoder.feed(chunk):
                message = _json_message(data.encode())
                if message is None:
                    continue
                if "method" not in message and message.get("id") == request_id:
                    return message
                if self.tap is not None:
                    self.tap("receive", message, False)
        return None

    async def post_raw(self, body: bytes, headers: dict[str, str], timeout: float) -> Exchange:
        """POST bytes as they are (a header check's request); the body is recorded if JSON."""
        sent: dict[str, Any] = _json_message(body) or {}
        exchange = Exchange(sent, None, headers=headers)
        if self.tap is not None and sent:
            self.tap("send", sent, True)
        import httpx

        try:
            async with asyncio.timeout(timeout):
                reply = await self.client.post(self.url, content=body, headers=headers)
        except (TimeoutError, httpx.HTTPError) as exc:
            exchange.note = f"no answer ({type(exc).__name__})"
            return exchange
        exchange.status = reply.status_code
        exchange.reply_headers = {k.lower(): v for k, v in reply.headers.items()}
        exchange.response = _json_message(reply.content)
        return exchange

    async def notify(self, message: dict[str, Any]) -> None:
        if self.tap is not None:
            self.tap("send", message, False)
        import httpx

        with contextlib.suppress(httpx.HTTPError):
            await self.client.post(self.url, content=orjson.dumps(message),
                                   headers=self.headers_for(message))

    async def close(self) -> None:
        import httpx

        if self.session_id is not None:
            with contextlib.suppress(httpx.HTTPError):
                await self.client.delete(self.url, headers={
                    Header.SESSION_ID: self.session_id,
                    Header.PROTOCOL_VERSION: self.legacy_version or ""})
        await self.client.aclose()


def _json_message(body: bytes) -> dict[str, Any] | None:
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return message if type(message) is dict else None


async def open_channel(target: Target, tap: Tap | None = None) -> Channel:
    """A new channel to `target`: for stdio a new process, for HTTP a new client."""
    if target.kind == "stdio":
        return await LineChannel.start(target, tap)
    return HTTPChannel(target, tap)
