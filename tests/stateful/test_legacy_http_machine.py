"""2025-11-25 sessions on a real uvicorn (127.0.0.1), walked by a state machine against a model
of what the spec (LEG-11/12/13, CANC for legacy) and docs/http.md ("Resumable legacy streams")
and docs/legacy.md promise a client.

One server serves the whole run; each example opens its own sessions, at the three legacy
versions. The session store's clock is the machine's, and a session idles out after a minute
of it. The model:

- a session answers while it lives: until its DELETE, or until it has gone a minute without an
  exchange naming it (a change carried to its open GET stream counts); after that every
  exchange naming it is 404, and its GET stream ends at the next change;
- a request's stream carries its messages in order (progress, a request to the client, the
  response), each with an event id; 2025-11-25 streams also carry empty events (priming,
  the end of a cancelled stream) that hold only an id;
- a client may drop a request's stream without cancelling it; a GET with `Last-Event-ID`
  naming any event it saw gets every message after that event, those sent while it was away
  included, with the ids they had, then the rest live, and the response ends it; a resume
  takes the stream over from a connection still open, which ends;
- `notifications/cancelled` ends the request: its stream ends without a response;
- a request naming an id in flight in its session is 400; an event id of another session or
  of no form the server makes is 400; a well-formed one it does not know is 410;
- the session GET stream is one at a time (409 for a second), carries each change of the tool
  list while it is open, and resumes like a request's stream;
- DELETE ends the session's requests (their streams end without a response) and its GET
  stream.

Every message the server sends is checked against the official 2025-11-25 schema, by
resume_peer's `Recorder` around the app.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson
from helpers.transports.resume_peer import Recorder, on_free_port
from helpers.wire import LEGACY, check_client_message
from http_watch import BOUND, Conn, Exchanges, ObservedEvents
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from stateful_runs import Tally, machine_settings

from mcpkit import Context, Server
from mcpkit.store.legacy.sessions import MemorySessionStore
from mcpkit.transports.http_server.app import HTTPApp
from mcpkit.transports.http_server.options import HTTPOptions

IDLE = 60.0
VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"]
ACCEPT = "application/json, text/event-stream"
TALLY = Tally("2025-11-25 HTTP sessions on uvicorn")


class Clock:
    def __init__(self) -> None:
        self.now = 5_000.0

    def __call__(self) -> float:
        return self.now


class Tools:
    """What the tools of the run's server wait on: one queue of commands per serial, and an
    acknowledgement of each command once its effect is kept."""

    def __init__(self) -> None:
        self.commands: dict[str, asyncio.Queue[str]] = {}
        self.done: dict[str, asyncio.Queue[None]] = {}

    def queues(self, serial: str) -> tuple[asyncio.Queue[str], asyncio.Queue[None]]:
        return (self.commands.setdefault(serial, asyncio.Queue()),
                self.done.setdefault(serial, asyncio.Queue()))


def make_server(tools: Tools) -> Server:
    server = Server("sessions", "1.0.0")

    @server.tool()
    async def work(serial: str, ctx: Context) -> str:
        """Reports progress 0, then one more per "progress" command, until "finish"."""
        commands, done = tools.queues(serial)
        await ctx.report_progress(0)
        steps = 0
        while await commands.get() != "finish":
            steps += 1
            await ctx.report_progress(steps)
            done.put_nowait(None)
        return serial

    @server.tool()
    async def ask(serial: str, ctx: Context) -> str:
        """Asks the client for a word and answers with it."""
        answer = await ctx.elicit("word", "A word?", {"v": str})
        return f"{serial}:{answer['v']}"

    @server.tool()
    async def echo(text: str) -> str:
        return text

    return server


# -- the model -----------------------------------------------------------------------------------

@dataclass(eq=False)
class Stream:
    """One resumable stream as the client knows it: a request's, or the session's GET stream."""

    session: Session
    kind: str
    """"work", "ask" or "get"."""
    request_id: int | None = None
    serial: str = ""
    messages: list[tuple[Any, ...]] = field(default_factory=list)
    """What the server has sent on it so far, summed up (see `summary`), in order."""
    ids: dict[int, str] = field(default_factory=dict)
    """Message index -> the event id it was seen with."""
    marks: list[tuple[str, int]] = field(default_factory=list)
    """Each event id the client saw, with how many messages came up to and including it."""
    conn: Conn | None = None
    state: str = "running"
    """"running", "done" (the response was sent) or "cancelled" (ended without one)."""
    stream_id: str | None = None
    asked_id: Any = None
    """The id of the server's elicitation request (`ask`), once seen."""


@dataclass(eq=False)
class Session:
    id: str
    version: str
    seen: float
    gone: bool = False
    deleted: bool = False
    """Ended by a DELETE, which also forgets its events (an idle session's are kept)."""
    next_id: int = 0
    streams: list[Stream] = field(default_factory=list)
    get: Stream | None = None
    """The GET stream last opened (connected or not)."""

    @property
    def primes(self) -> bool:
        return self.version >= "2025-11-25"


def summary(message: dict[str, Any]) -> tuple[Any, ...]:
    if message.get("method") == "notifications/progress":
        return ("progress", message["params"]["progress"])
    if "method" in message:
        return ("request" if "id" in message else "note", message["method"])
    if "error" in message:
        return ("error", message["error"]["code"])
    return ("result", message["result"]["content"][0]["text"])


class SessionsMachine(RuleBasedStateMachine):
    sessions = Bundle("sessions")

    def __init__(self, run: Run) -> None:
        super().__init__()
        TALLY.example()
        self.run = run
        self.open_sessions: list[Session] = []

    # -- plumbing ----------------------------------------------------------------------------

    def wait(self, coro: Any) -> Any:
        return self.run.loop.run_until_complete(coro)

    @property
    def now(self) -> float:
        return self.run.clock.now

    def lives(self, session: Session) -> bool:
        """Whether the model says the session still answers (and, if so, it is touched)."""
        if session.gone or self.now - session.seen >= IDLE:
            TALLY.saw("an exchange with a session gone (404)" if session.gone
                      else "a session idled out")
            session.gone = True
            return False
        session.seen = self.now
        return True

    def headers(self, session: Session | None, accept: str = ACCEPT, **extra: str
                ) -> dict[str, str]:
        headers = {"Accept": accept, "Content-Type": "application/json",
                   "x-exchange": str(next(self.run.exchanges)), **extra}
        if session is not None:
            headers["Mcp-Session-Id"] = session.id
            headers["MCP-Protocol-Version"] = session.version
        return headers

    def post(self, session: Session | None, message: dict[str, Any]) -> httpx.Response:
        check_client_message(LEGACY, message)
        return self.wait(self.run.http.post(self.run.url, content=orjson.dumps(message),
                                            headers=self.headers(session)))

    def open(self, method: str, session: Session, message: dict[str, Any] | None = None,
             **headers: str) -> tuple[httpx.Response, int]:
        """Send a request whose response may be a stream; the response, not read yet."""
        all_headers = self.headers(session, **headers)
        if method == "GET":
            all_headers["Accept"] = "text/event-stream"
            del all_headers["Content-Type"]
        content = None
        if message is not None:
            check_client_message(LEGACY, message)
            content = orjson.dumps(message)
        request = self.run.http.build_request(method, self.run.url, content=content,
                                              headers=all_headers)
        response = self.wait(self.run.http.send(request, stream=True))
        return response, int(all_headers["x-exchange"])

    def request(self, session: Session, method: str, params: dict[str, Any] | None = None
                ) -> dict[str, Any]:
        session.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": session.next_id, "method": method}
        if params is not None:
            message["params"] = params
        return message

    def not_found(self, response: httpx.Response) -> None:
        self.wait(response.aread())
        assert response.status_code == 404, (response.status_code, response.text)

    # -- reading streams ---------------------------------------------------------------------

    def read_message(self, stream: Stream, conn: Conn) -> dict[str, Any]:
        """The next message on `conn`, the marks before it noted; it must be the message the
        model expects next."""
        while True:
            event = self.wait(conn.next())
            assert event is not None, f"the {stream.kind} stream ended before message " \
                                      f"{len(stream.messages)}"
            assert event.id is not None, f"a legacy event without an id: {event}"
            if not event.data:
                assert stream.session.primes, f"an empty event on a {stream.session.version} stream"
                stream.marks.append((event.id, len(stream.messages)))
                continue
            message = event.message
            assert message is not None
            index = len(stream.messages)
            stream.messages.append(summary(message))
            self.note_id(stream, index, event.id)
            return message

    def note_id(self, stream: Stream, index: int, event_id: str) -> None:
        known = stream.ids.get(index)
        assert known is None or known == event_id, (index, known, event_id)
        stream.ids[index] = event_id
        stream.marks.append((event_id, index + 1))
        name, _, number = event_id.rpartition(".")
        stream.stream_id = stream.stream_id or name
        assert name == stream.stream_id, f"{event_id} is not of stream {stream.stream_id}"
        assert number.isdigit()

    def replayed(self, stream: Stream, conn: Conn, start: int) -> None:
        """Read messages `start:` of the stream, as the model knows them, from `conn`."""
        for index in range(start, len(stream.messages)):
            while True:
                event = self.wait(conn.next())
                assert event is not None, f"the resumed stream ended before message {index}"
                assert event.id is not None
                if event.data:
                    break
                stream.marks.append((event.id, index))
            message = event.message
            assert message is not None
            assert summary(message) == stream.messages[index], (index, message, stream.messages)
            self.note_id(stream, index, event.id)

    def read_end(self, stream: Stream, conn: Conn) -> None:
        """`conn` ends with no further message (an empty event may still come)."""
        while True:
            event = self.wait(conn.next())
            if event is None:
                break
            assert not event.data, f"a message after the end of the {stream.kind} stream: {event}"
            if event.id is not None:
                stream.marks.append((event.id, len(stream.messages)))
        self.wait(conn.close())
        if stream.conn is conn:
            stream.conn = None

    def ended(self, stream: Stream) -> None:
        """The stream's request ended; a connection still carrying it ends."""
        if stream.conn is not None:
            self.read_end(stream, stream.conn)
        else:
            assert stream.stream_id is not None
            self.wait(self.run.events.ended(stream.stream_id))

    # -- sessions ----------------------------------------------------------------------------

    @initialize(target=sessions, version=st.sampled_from(VERSIONS))
    def first_session(self, version: str) -> Session:
        return self.initialize(version)

    @rule(target=sessions, version=st.sampled_from(VERSIONS))
    def initialize(self, version: str) -> Session:
        TALLY.step()
        reply = self.post(None, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "machine", "version": "1"}}})
        assert reply.status_code == 200, reply.text
        assert reply.json()["result"]["protocolVersion"] == version
        session_id = reply.headers["mcp-session-id"]
        assert session_id and all(0x21 <= ord(c) <= 0x7E for c in session_id), session_id
        assert all(s.id != session_id for s in self.open_sessions)
        session = Session(session_id, version, self.now)
        self.open_sessions.append(session)
        note = self.post(session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert note.status_code == 202, note.text
        return session

    @rule(session=sessions, method=st.sampled_from(["ping", "tools/list", "echo"]))
    def quick(self, session: Session, method: str) -> None:
        TALLY.step()
        if method == "echo":
            message = self.request(session, "tools/call",
                                   {"name": "echo", "arguments": {"text": "hi"}})
        else:
            message = self.request(session, method)
        reply = self.post(session, message)
        if not self.lives(session):
            assert reply.status_code == 404, reply.text
            return
        assert reply.status_code == 200, reply.text
        result = reply.json()["result"]
        if method == "ping":
            assert result == {}, result
        elif method == "echo":
            assert result["content"][0]["text"] == "hi", result
        else:
            assert {t["name"] for t in result["tools"]} == {"work", "ask", "echo"}, result

    @rule(session=sessions, kind=st.sampled_from(["work", "work", "ask"]))
    def start(self, session: Session, kind: str) -> None:
        TALLY.step()
        serial = f"s{next(self.run.serials)}"
        params: dict[str, Any] = {"name": kind, "arguments": {"serial": serial}}
        if kind == "work":
            params["_meta"] = {"progressToken": serial}
        message = self.request(session, "tools/call", params)
        response, exchange = self.open("POST", session, message)
        if not self.lives(session):
            self.not_found(response)
            return
        assert response.status_code == 200, response.status_code
        assert response.headers["content-type"].startswith("text/event-stream")
        stream = Stream(session, kind, message["id"], serial, conn=Conn(response, exchange))
        session.streams.append(stream)
        first = self.read_message(stream, stream.conn)  # type: ignore[arg-type]
        if kind == "work":
            assert summary(first) == ("progress", 0), first
        else:
            assert summary(first) == ("request", "elicitation/create"), first
            stream.asked_id = first["id"]

    @precondition(lambda self: any(s.state == "running" and s.kind == "work"
                                   for sess in self.open_sessions for s in sess.streams))
    @rule(data=st.data(), finish=st.booleans())
    def step(self, data: st.DataObject, finish: bool) -> None:
        """A running `work` request reports progress, or finishes."""
        TALLY.step()
        running = [s for sess in self.open_sessions for s in sess.streams
                   if s.state == "running" and s.kind == "work"]
        stream = data.draw(st.sampled_from(running), label="stream")
        commands, done = self.run.tools.queues(stream.serial)
        if finish:
            commands.put_nowait("finish")
            stream.state = "done"
            self.response_sent(stream, ("result", stream.serial))
            return
        commands.put_nowait("progress")
        self.wait(asyncio.wait_for(done.get(), BOUND))
        if stream.conn is not None:
            message = self.read_message(stream, stream.conn)
            assert summary(message) == ("progress", len(stream.messages) - 1), message
        else:
            stream.messages.append(("progress", len(stream.messages)))

    def response_sent(self, stream: Stream, expected: tuple[Any, ...]) -> None:
        if stream.conn is not None:
            message = self.read_message(stream, stream.conn)
            assert summary(message) == expected, message
            self.read_end(stream, stream.conn)
        else:
            assert stream.stream_id is not None
            self.wait(self.run.events.ended(stream.stream_id))
            stream.messages.append(expected)

    @precondition(lambda self: any(s.state == "running" and s.kind == "ask"
                                   for sess in self.open_sessions for s in sess.streams))
    @rule(data=st.data())
    def answer(self, data: st.DataObject) -> None:
        """The client answers the server's question by a POST of its own."""
        TALLY.step()
        asking = [s for sess in self.open_sessions for s in sess.streams
                  if s.state == "running" and s.kind == "ask"]
        stream = data.draw(st.sampled_from(asking), label="stream")
        reply = self.post(stream.session, {"jsonrpc": "2.0", "id": stream.asked_id,
                                           "result": {"action": "accept",
                                                      "content": {"v": "hello"}}})
        if not self.lives(stream.session):
            assert reply.status_code == 404, reply.text
            return
        assert reply.status_code == 202, reply.text
        stream.state = "done"
        self.response_sent(stream, ("result", f"{stream.serial}:hello"))

    @rule(session=sessions, request_id=st.sampled_from(["s-1", "mcpkit-1", 10_000, -1]))
    def answer_nothing_asked(self, session: Session, request_id: Any) -> None:
        """An answer to a question the server never asked is taken (202) and changes nothing."""
        TALLY.step()
        reply = self.post(session, {"jsonrpc": "2.0", "id": request_id, "result": {}})
        if not self.lives(session):
            assert reply.status_code == 404, reply.text
            return
        assert reply.status_code == 202, reply.text

    def request_streams(self) -> list[Stream]:
        return [s for sess in self.open_sessions for s in sess.streams]

    def every_stream(self) -> list[Stream]:
        gets = [sess.get for sess in self.open_sessions if sess.get is not None]
        return [*self.request_streams(), *gets]

    @precondition(lambda self: any(s.conn is not None for s in self.every_stream()))
    @rule(data=st.data())
    def drop(self, data: st.DataObject) -> None:
        """The client's connection carrying a request's stream breaks (no cancellation)."""
        TALLY.step()
        stream = data.draw(st.sampled_from(
            [s for s in self.every_stream() if s.conn is not None]), label="stream")
        conn, stream.conn = stream.conn, None
        assert conn is not None
        self.wait(conn.close())
        if stream.kind == "get":
            self.wait(self.run.watch.finished(conn.exchange))

    @precondition(lambda self: any(s.marks for s in self.every_stream()))
    @rule(data=st.data())
    def resume(self, data: st.DataObject) -> None:
        TALLY.step()
        stream = data.draw(st.sampled_from([s for s in self.every_stream() if s.marks]),
                           label="stream")
        event_id, count = data.draw(st.sampled_from(stream.marks), label="from")
        response, exchange = self.open("GET", stream.session, **{"Last-Event-ID": event_id})
        if not self.lives(stream.session):
            self.not_found(response)
            return
        assert response.status_code == 200, (response.status_code, self.wait(response.aread()))
        conn = Conn(response, exchange)
        TALLY.saw(f"resume of a {stream.kind} stream, {stream.state}, "
                  f"{min(len(stream.messages) - count, 2)}+ to replay")
        self.replayed(stream, conn, count)
        if stream.state != "running":
            assert stream.conn is None
            self.read_end(stream, conn)
            return
        # The resume takes the stream over: the connection that carried it ends, and so does
        # the session's GET stream when this is a GET stream (there is one at a time).
        old = stream.conn
        stream.conn = conn
        if old is not None:
            self.read_end(stream, old)
        session = stream.session
        if stream.kind == "get":
            current = session.get
            if current is not None and current is not stream and current.conn is not None:
                self.read_end(current, current.conn)
            session.get = stream

    @precondition(lambda self: bool(self.request_streams()))
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        TALLY.step()
        stream = data.draw(st.sampled_from(self.request_streams()), label="stream")
        reply = self.post(stream.session, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                           "params": {"requestId": stream.request_id}})
        if not self.lives(stream.session):
            assert reply.status_code == 404, reply.text
            return
        assert reply.status_code == 202, reply.text
        if stream.state == "running":
            TALLY.saw(f"cancel of a running {stream.kind}, "
                      f"{'connected' if stream.conn else 'away'}")
            stream.state = "cancelled"
            self.ended(stream)

    @precondition(lambda self: bool(self.request_streams()))
    @rule(data=st.data())
    def reuse_id(self, data: st.DataObject) -> None:
        """A request naming the id of one still in flight in its session is refused."""
        TALLY.step()
        stream = data.draw(st.sampled_from(self.request_streams()), label="stream")
        message = {"jsonrpc": "2.0", "id": stream.request_id, "method": "ping"}
        reply = self.post(stream.session, message)
        if not self.lives(stream.session):
            assert reply.status_code == 404, reply.text
            return
        if stream.state == "running":
            assert reply.status_code == 400, reply.text
            assert reply.json()["error"]["code"] == -32600, reply.text
        else:
            assert reply.status_code == 200 and reply.json()["result"] == {}, reply.text

    # -- the session's GET stream --------------------------------------------------------

    @rule(session=sessions)
    def open_get(self, session: Session) -> None:
        TALLY.step()
        response, exchange = self.open("GET", session)
        if not self.lives(session):
            self.not_found(response)
            return
        if session.get is not None and session.get.conn is not None:
            self.wait(response.aread())
            TALLY.saw("a second GET stream (409)")
            assert response.status_code == 409, response.text
            return
        assert response.status_code == 200, (response.status_code, self.wait(response.aread()))
        stream = Stream(session, "get", conn=Conn(response, exchange))
        session.get = stream
        if session.primes:
            event = self.wait(stream.conn.next())  # type: ignore[union-attr]
            assert event is not None and event.id is not None and not event.data, event
            stream.marks.append((event.id, 0))
            stream.stream_id = event.id.rpartition(".")[0]

    @rule(session=sessions)
    def drop_get(self, session: Session) -> None:
        TALLY.step()
        stream = session.get
        if stream is None or stream.conn is None:
            return
        conn, stream.conn = stream.conn, None
        self.wait(conn.close())
        self.wait(self.run.watch.finished(conn.exchange))

    @rule()
    def tools_change(self) -> None:
        TALLY.step()
        self.run.server.notify_tools_changed()
        for session in self.open_sessions:
            stream = session.get
            if stream is None or stream.conn is None:
                continue
            if self.lives(session):
                TALLY.saw("a change on a GET stream")
                message = self.read_message(stream, stream.conn)
                assert summary(message) == ("note", "notifications/tools/list_changed"), message
            else:
                conn = stream.conn
                self.read_end(stream, conn)
                self.wait(self.run.watch.finished(conn.exchange))

    # -- ending ------------------------------------------------------------------------------

    @rule(session=sessions, now=st.sampled_from([True, False, False]))
    def delete(self, session: Session, now: bool) -> None:
        """DELETE (drawn rarely, since it ends what the other rules walk)."""
        TALLY.step()
        if not now:
            return
        response, _ = self.open("DELETE", session)
        self.wait(response.aread())
        if not self.lives(session):
            assert response.status_code == 404, response.text
            return
        assert response.status_code == 200, response.text
        TALLY.saw(f"DELETE with {sum(s.state == 'running' for s in session.streams)} running")
        session.gone = session.deleted = True
        for stream in session.streams:
            if stream.state == "running":
                stream.state = "cancelled"
                if stream.conn is not None:
                    self.read_end(stream, stream.conn)
        if session.get is not None and session.get.conn is not None:
            conn = session.get.conn
            self.read_end(session.get, conn)

    @rule(seconds=st.sampled_from([1.0, 1.0, 1.0, 30.0, 59.0, 60.0]))
    def time_passes(self, seconds: float) -> None:
        TALLY.step()
        self.run.clock.now += seconds

    @rule(session=sessions, other=sessions, kind=st.sampled_from(["unknown", "malformed",
                                                                    "another's"]))
    def resume_what_cannot_be(self, session: Session, other: Session, kind: str) -> None:
        TALLY.step()
        if kind == "another's":
            marks = [m for s in [*other.streams, other.get] if s is not None for m in s.marks]
            if other is session or not marks:
                return
            event_id = marks[0][0]
        else:
            event_id = "p0123456789abcdef.999999" if kind == "unknown" else "no such id!"
        response, _ = self.open("GET", session, **{"Last-Event-ID": event_id})
        self.wait(response.aread())
        if not self.lives(session):
            assert response.status_code == 404, response.text
            return
        # Another session's event id is 400, unless that session was deleted: its events are
        # forgotten then, and an id the store does not know is 410 (docs/http.md).
        expected = 410 if kind == "unknown" or (kind == "another's" and other.deleted) else 400
        assert response.status_code == expected, (kind, response.status_code, response.text)

    @invariant()
    def every_message_passed_the_schema(self) -> None:
        assert not self.run.recorder.failures, self.run.recorder.failures

    def teardown(self) -> None:
        try:
            for session in self.open_sessions:
                for stream in [*session.streams, session.get]:
                    if stream is not None and stream.conn is not None:
                        self.wait(stream.conn.close())
                    if stream is not None and stream.kind == "work":
                        self.run.tools.queues(stream.serial)[0].put_nowait("finish")
                if not session.gone:
                    response, _ = self.open("DELETE", session)
                    self.wait(response.aread())
        finally:
            TALLY.report()


@dataclass
class Run:
    """The run's one server and what the machine reaches it by."""

    loop: asyncio.AbstractEventLoop
    clock: Clock
    tools: Tools
    server: Server
    events: ObservedEvents
    watch: Exchanges
    recorder: Recorder
    http: httpx.AsyncClient
    url: str
    serials: Iterator[int] = field(default_factory=itertools.count)
    exchanges: Iterator[int] = field(default_factory=itertools.count)


@contextlib.contextmanager
def running_server() -> Iterator[Run]:
    loop = asyncio.new_event_loop()
    clock = Clock()
    tools = Tools()
    server = make_server(tools)
    events = ObservedEvents()
    app = HTTPApp(server, HTTPOptions(
        session_store=MemorySessionStore(idle_s=IDLE, clock=clock), event_store=events))
    recorder = Recorder(app)
    watch = Exchanges(recorder)
    served = on_free_port(watch)
    try:
        url = loop.run_until_complete(served.__aenter__())
        http = httpx.AsyncClient(timeout=BOUND)
        try:
            yield Run(loop, clock, tools, server, events, watch, recorder, http, url)
        finally:
            loop.run_until_complete(http.aclose())
            loop.run_until_complete(app.close())
            loop.run_until_complete(served.__aexit__(None, None, None))
    finally:
        loop.close()


def test_legacy_sessions_answer_resume_and_end_as_the_model_says() -> None:
    with running_server() as run:
        run_state_machine_as_test(lambda: SessionsMachine(run), settings=machine_settings(25))
