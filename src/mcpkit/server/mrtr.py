"""Multi round-trip requests on the server: rounds, the sealed `requestState`, single use.

In 2026-07-28 a server never sends a request to the client (MRTR-1). A handler that needs
input calls `ctx.ask(...)` (or `ctx.elicit`, `ctx.sample`, `ctx.roots`); when the request
does not yet carry the answer, the `InputRequired` signal ends this round and the method
answers an `InputRequiredResult`. The client retries the same request with `inputResponses`
and the echoed `requestState`, and the handler runs again from the top: each ask now returns
its answer. A `Round` is that bookkeeping for one request:

- on the way in it opens the presented `requestState` (every failure is -32602 naming the
  check, logged, and nothing of the state is used) and takes `inputResponses`;
- while the handler runs it answers asks from answers carried in the state, then from this
  request's `inputResponses`, and collects what is still missing;
- on the way out it seals `ctx.state` and the answers so far into a new `requestState`
  bound to the principal, the method and its target and arguments, with a short expiry.

So no server memory is used between rounds, and any instance holding the keys can serve a
retry. Single use (for one-time actions) records the state's nonce in the server's `Store`.

Imports: `mcpkit.protocol`, `mcpkit.errors`, `mcpkit.types`, `mcpkit.store`, `mcpkit.server.asking`.
"""

from __future__ import annotations

import base64
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import orjson

from mcpkit.errors import InvalidParamsError, MissingRequiredClientCapabilityError
from mcpkit.protocol.envelope import missing_capabilities
from mcpkit.protocol.request_state import (
    REQUEST_STATE,
    KeyRing,
    Opened,
    StateRejected,
    arguments_digest,
    open_token,
    seal_token,
    target_digest,
)
from mcpkit.server.asking import Question
from mcpkit.types.constants import Method

if TYPE_CHECKING:
    from mcpkit.server.server import ServerOptions
    from mcpkit.store import Store

__all__ = [
    "ASKING_METHODS",
    "STATE_KEYS_ENV",
    "InputRequired",
    "InputRequiredResult",
    "Round",
    "Sealer",
    "begin_round",
    "new_state_key",
    "principal_key",
]

log = logging.getLogger("mcpkit.server")

ASKING_METHODS: Final = {
    Method.TOOLS_CALL: "tool", Method.PROMPTS_GET: "prompt", Method.RESOURCES_READ: "resource"
}
"""The only methods that may answer `input_required` (MRTR-4), and what their target is."""

STATE_KEYS_ENV: Final = "MCPKIT_STATE_KEYS"
"""Environment variable read when `ServerOptions.state_keys` is empty: keys separated by
commas or spaces, the first one sealing."""

_EMPTY: Final[dict[str, Any]] = {}


def new_state_key() -> str:
    """A fresh 256-bit key for `ServerOptions.state_keys` or MCPKIT_STATE_KEYS."""
    return KeyRing.key_text(os.urandom(32))


class InputRequired(BaseException):
    """Ends a round that still needs input from the client.

    A BaseException, like cancellation, so that a handler's `except Exception` cannot
    swallow it by accident.
    """


class InputRequiredResult(dict[str, Any]):
    """`{"resultType": "input_required", "inputRequests"?, "requestState"?}` as a method
    returns it; the type tells it apart from whatever a handler returned."""


def principal_key(principal: Any) -> str | None:
    """The stable identity a state or handle is bound to, or None for an anonymous caller.

    A string is itself; an object or mapping gives its issuer and subject (`issuer`/`iss`
    and `subject`/`sub`/`client_id`/`id`), so the same caller matches across processes.
    """
    if principal is None:
        return None
    if isinstance(principal, str):
        return principal
    get: Callable[[str], Any]
    if isinstance(principal, Mapping):
        get = principal.get
    else:
        def get(name: str) -> Any:
            return getattr(principal, name, None)
    subject = next((v for n in ("subject", "sub", "client_id", "id")
                    if isinstance(v := get(n), str | int) and not isinstance(v, bool)), None)
    if subject is None:
        raise TypeError(
            f"cannot bind request state to a principal of type {type(principal).__name__}: "
            "give it a 'subject' (or 'sub') attribute, or authenticate callers as strings"
        )
    issuer = next((v for n in ("issuer", "iss") if isinstance(v := get(n), str)), "")
    return f"{issuer}\0{subject}" if issuer else str(subject)


class Sealer:
    """A server's keys, clock, state lifetime and store: everything sealing needs."""

    __slots__ = ("_store", "clock", "ring", "ttl")

    def __init__(self, options: ServerOptions) -> None:
        keys: tuple[str | bytes, ...] = tuple(options.state_keys)
        if not keys:
            keys = tuple(os.environ.get(STATE_KEYS_ENV, "").replace(",", " ").split())
        ephemeral = not keys
        self.ring = KeyRing(keys or (os.urandom(32),), os.urandom, ephemeral=ephemeral)
        if not options.state_ttl > 0:
            raise ValueError(f"state_ttl must be a positive number of seconds, got {options.state_ttl!r}")
        self.ttl = float(options.state_ttl)
        self.clock = options.clock
        self._store = options.store

    @property
    def store(self) -> Store:
        if self._store is None:
            from mcpkit.store.memory import MemoryStore

            self._store = MemoryStore(clock=self.clock)
        return self._store

    @property
    def ephemeral(self) -> bool:
        """No key was configured: states sealed here open only in this process."""
        return self.ring.ephemeral

    def seal_state(
        self, principal: Any, method: str, target: str, arguments: Any, body: bytes,
        single_use: bool,
    ) -> str:
        return seal_token(
            self.ring, REQUEST_STATE, now=self.clock(), ttl=self.ttl,
            principal=principal_key(principal), target=target_digest(method, target),
            arguments=arguments_digest(arguments), body=body, single_use=single_use,
        )

    def open_state(
        self, token: str, principal: Any, method: str, target: str, arguments: Any, where: str,
    ) -> Opened:
        return open_token(
            self.ring, REQUEST_STATE, token, now=self.clock(), principal=principal_key(principal),
            target=target_digest(method, target), arguments=arguments_digest(arguments),
            where=where, target_noun=ASKING_METHODS.get(method, "request"),
        )

    async def redeem(self, opened: Opened, where: str, what: str = "requestState") -> None:
        """Record the token's nonce; a second presentation is rejected (-32602)."""
        nonce = base64.urlsafe_b64encode(opened.nonce).decode("ascii")
        if not await self.store.add(f"once:{nonce}", b"", opened.expires_at):
            log.warning("rejected %s on %s: already used", what, where)
            raise StateRejected(
                "replayed", f"{where}: this {what} was already used and is good for one use "
                "only; start the request again without it"
            )

    def warn_if_ephemeral(self, transport: str) -> None:
        """For transports where retries may reach another instance (HTTP)."""
        if self.ephemeral:
            log.warning(
                "no state keys configured (ServerOptions.state_keys or %s): a random key is "
                "used, so %s retries that reach another instance or a restarted process will "
                "fail; configure a shared key made by mcpkit.server.mrtr.new_state_key()",
                STATE_KEYS_ENV, transport,
            )


def begin_round(ctx: Any, target: str, arguments: Any, params: dict[str, Any]) -> Round:
    """The round of one `tools/call`, `prompts/get` or `resources/read`; the context asks
    through it."""
    rnd = Round(ctx.server.sealer, ctx.method, target, arguments, params, ctx.principal)
    ctx._round = rnd
    return rnd


class Round:
    """One request's part in a multi round-trip exchange."""

    __slots__ = (
        "_arguments", "_carried", "_method", "_opened", "_pending", "_principal", "_redeemed",
        "_responses", "_sealer", "_single_use", "_state", "_target", "_used",
    )

    def __init__(
        self, sealer: Sealer, method: str, target: str, arguments: Any, params: dict[str, Any],
        principal: Any,
    ) -> None:
        self._sealer = sealer
        self._method = method
        self._target = target
        self._arguments = arguments
        self._principal = principal
        self._pending: dict[str, Question] | None = None
        self._used: dict[str, Any] | None = None
        self._state: dict[str, Any] | None = None
        self._carried: dict[str, Any] = _EMPTY
        self._opened: Opened | None = None
        self._redeemed = False
        self._single_use = False
        responses = params.get("inputResponses", _EMPTY)
        if type(responses) is not dict:
            raise InvalidParamsError(
                f"{self.where}: inputResponses must be an object mapping each key of the "
                f"previous inputRequests to its result; got {_json_type(responses)}"
            )
        self._responses: dict[str, Any] = responses
        if "requestState" in params:
            self._open(params["requestState"])

    @property
    def where(self) -> str:
        return f"{self._method} {self._target!r}"

    def _open(self, token: Any) -> None:
        if type(token) is not str or not token:
            raise InvalidParamsError(
                f"{self.where}: requestState must be the string from the previous result, "
                "echoed unchanged"
            )
        try:
            opened = self._sealer.open_state(
                token, self._principal, self._method, self._target, self._arguments, self.where
            )
        except StateRejected as exc:
            log.warning("rejected requestState on %s: %s", self.where, exc.data["reason"])
            raise
        body = orjson.loads(opened.body) if opened.body else _EMPTY
        state, carried = body.get("s"), body.get("a")
        self._state = state if type(state) is dict else None
        self._carried = carried if type(carried) is dict else _EMPTY
        self._opened = opened
        self._single_use = opened.single_use

    @property
    def state(self) -> dict[str, Any]:
        if self._state is None:
            self._state = {}
        return self._state

    @property
    def has_state(self) -> bool:
        """A valid requestState came with this request."""
        return self._opened is not None

    def can_ask(self, capabilities: dict[str, Any], question: Question) -> bool:
        return not missing_capabilities(capabilities, question.capability)

    async def ask(
        self,
        capabilities: dict[str, Any],
        questions: Mapping[str, Question],
        *,
        single_use: bool = False,
        skip_unsupported: bool = False,
    ) -> dict[str, Any]:
        """Each question's answer, or InputRequired for the ones this request lacks."""
        where = self.where
        lacking: dict[str, Any] = {}
        chosen: list[tuple[str, Question]] = []
        for key, question in questions.items():
            if not isinstance(key, str) or not key:
                raise TypeError(f"{where}: input request keys must be non-empty strings")
            if not isinstance(question, Question):
                raise TypeError(f"{where}: {key!r} must be an Elicit, ElicitURL, Sample or ListRoots")
            missing = missing_capabilities(capabilities, question.capability)
            if not missing:
                chosen.append((key, question))
            elif not skip_unsupported:
                for name, sub in missing.items():
                    lacking.setdefault(name, {}).update(sub)
        if lacking:
            names = ", ".join(sorted(lacking))
            raise MissingRequiredClientCapabilityError(
                lacking, f"{where} needs the client capability {names} to ask "
                f"{', '.join(repr(k) for k in questions)}; declare it in _meta "
                "io.modelcontextprotocol/clientCapabilities",
            )
        if single_use:
            self._single_use = True
        answers: dict[str, Any] = dict.fromkeys(questions)
        waiting: list[tuple[str, Question]] = []
        for key, question in chosen:
            question.request(where)  # checks the question where it is asked
            if key in self._carried:
                raw = self._carried[key]
            elif key in self._responses and (self._opened is not None or not single_use):
                raw = self._responses[key]
            else:
                waiting.append((key, question))
                continue
            answers[key] = question.read(raw, where, key)
            if self._used is None:
                self._used = {}
            self._used[key] = raw
        if waiting:
            if self._pending is None:
                self._pending = {}
            self._pending.update(waiting)
            raise InputRequired(where)
        if single_use:
            await self.redeem()
        return answers

    async def redeem(self) -> bool:
        """Use the presented state at most once; False when none was presented."""
        self._single_use = True
        if self._opened is None:
            return False
        if not self._redeemed:
            await self._sealer.redeem(self._opened, self.where)
            self._redeemed = True
        return True

    async def run(self, work: Awaitable[Any]) -> Any:
        """Await the handler; its value, or the InputRequiredResult that ends the round."""
        if self._single_use and not self._redeemed:
            try:
                await self.redeem()
            except BaseException:
                if hasattr(work, "close"):
                    work.close()
                raise
        try:
            value = await work
        except InputRequired:
            return self.input_required()
        if self._pending:  # the handler caught the signal; the round still asked
            return self.input_required()
        return value

    def input_required(self) -> InputRequiredResult:
        carried = {**self._carried, **self._used} if self._used else self._carried
        body: dict[str, Any] = {}
        if self._state:
            body["s"] = self._state
        if carried:
            body["a"] = carried
        try:
            data = orjson.dumps(body) if body else b""
        except TypeError as exc:
            raise TypeError(
                f"{self.where}: ctx.state must hold only JSON data (dict, list, str, int, "
                f"float, bool, None): {exc}"
            ) from None
        result = InputRequiredResult(resultType="input_required")
        if self._pending:
            result["inputRequests"] = {
                key: question.request(self.where) for key, question in self._pending.items()
            }
        result["requestState"] = self._sealer.seal_state(
            self._principal, self._method, self._target, self._arguments, data, self._single_use
        )
        return result


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(value), type(value).__name__)
