"""Multi round-trip requests and handles walked by a state machine against a model of what the
spec (MRTR-2/5/8/9/13/18) and docs/state.md promise.

Two replicas serve the same tools from one shared single-use store and one clock, each with a
ring of state keys that the machine redeploys at will (the first key seals, every key opens).
The principals are anonymous, two plain names, and one subject at two issuers. The model of a
presented `requestState` (or handle) is a list of checks in the documented order, the first
failing one deciding the answer:

1. it is one of ours, unaltered (a changed character, a handle for a state or a state for a
   handle, is refused);
2. the replica holds the key that sealed it (rotation: a key dropped from a ring no longer
   opens what it sealed there);
3. it has not expired (the replica's clock reached its sealing time plus its life);
4. the same principal presents it (issuer and subject; anonymous is nobody in particular);
5. it is presented for the same tool, and 6. the same arguments;
7. a single-use answer has not been redeemed before, on any replica.

A refused `requestState` is -32602 and runs nothing; a refused handle is a tool error naming
the check. A good state continues the exchange: answers carried in the state count before the
retry's own, missing answers are asked for again (with a new state), and a single-use tool
books once per state, never twice, whatever the retries. Every response is checked against
the official schema.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from helpers.wire import MODERN, check_server_message, meta
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)
from stateful_runs import Tally, machine_settings

from mcpkit import Context, Server, ServerOptions
from mcpkit.auth.server_config import Principal
from mcpkit.protocol.codec import Request
from mcpkit.server.sealing import new_state_key, principal_key
from mcpkit.store import MemoryStore, SQLiteStore

STATE_TTL = 60.0
HANDLE_TTL = 120.0
KEYS = [new_state_key() for _ in range(3)]
PRINCIPALS: list[Any] = [
    None, "alice", "bob", Principal("bob"),
    Principal("alice", issuer="https://a.example"), Principal("alice", issuer="https://b.example"),
]
"""`"bob"` and `Principal("bob")` are one principal (no issuer); the two issuers' alices are two."""
ITEMS = st.sampled_from(["tea", "cake", "jam"])
QUESTIONS = {"book": ["confirm"], "order": ["confirm", "note"], "survey": ["q1", "q2"]}
TOOLS = sorted(QUESTIONS)
CAPABILITIES = {"elicitation": {}}
MOSTLY = st.sampled_from([True, True, True, False])
"""A retry mostly repeats its first request (so that the rounds go on and replays happen)."""
TALLY = {engine: Tally(f"multi round-trip rounds and handles ({engine} store)")
         for engine in ("memory", "sqlite")}


def identity(principal: Any) -> tuple[str, str] | None:
    """Who a principal is, as the docs say states are bound: its issuer and subject."""
    if principal is None:
        return None
    if isinstance(principal, str):
        return ("", principal)
    return (principal.issuer or "", principal.subject)


class Clock:
    def __init__(self) -> None:
        self.now = 1_900_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class Sealed:
    """A token the server gave out, as the model knows it."""

    token: str
    kind: str
    """"book" or "survey" (a requestState of that tool), or "cart" (a handle)."""
    who: tuple[str, str] | None
    principal: Any
    key: str
    sealed_at: float
    life: float
    item: str = ""
    carried: tuple[tuple[str, str], ...] = ()
    rounds: int = 0
    items: tuple[str, ...] = ()


def make_replica(ring: list[str], clock: Clock, store: Any, bookings: list[Any]) -> Server:
    server = Server("rounds", "1.0.0", options=ServerOptions(
        state_keys=tuple(ring), state_ttl=STATE_TTL, clock=clock, store=store))

    @server.tool()
    async def book(item: str, ctx: Context) -> str:
        """Books `item` once the user confirms; the confirmation counts once."""
        answer = await ctx.elicit("confirm", f"Book {item}?", {"ok": bool}, single_use=True)
        if not answer.accepted:
            return f"declined {item}"
        bookings.append((item, principal_key(ctx.principal)))
        return f"booked {item}"

    @server.tool()
    async def order(item: str, ctx: Context) -> str:
        """A single-use confirmation, then a second question: the state that carries the
        confirmation on to the next round is itself good for one use."""
        answer = await ctx.elicit("confirm", f"Order {item}?", {"ok": bool}, single_use=True)
        if not answer.accepted:
            return f"declined {item}"
        note = await ctx.elicit("note", "A note?", {"v": str})
        bookings.append((item, principal_key(ctx.principal)))
        return f"ordered {item}: {note['v']}"

    @server.tool()
    async def survey(item: str, ctx: Context) -> str:
        """Two questions, one round each, and a count of rounds kept in ctx.state."""
        ctx.state["rounds"] = ctx.state.get("rounds", 0) + 1
        first = await ctx.elicit("q1", "First?", {"v": str})
        second = await ctx.elicit("q2", "Second?", {"v": str})
        return f"{item}:{first['v']}/{second['v']}:{ctx.state['rounds']}"

    @server.tool()
    async def cart_new(ctx: Context) -> str:
        return ctx.mint_handle("cart", [], ttl=HANDLE_TTL)

    @server.tool()
    async def cart_add(cart: str, item: str, ctx: Context) -> str:
        return ctx.mint_handle("cart", [*ctx.open_handle("cart", cart), item], ttl=HANDLE_TTL)

    @server.tool()
    async def cart_items(cart: str, ctx: Context) -> str:
        return ",".join(ctx.open_handle("cart", cart))

    @server.tool()
    async def draft_read(draft: str, ctx: Context) -> str:
        return str(ctx.open_handle("draft", draft))

    return server


def tamper(token: str, where: int) -> str:
    """The token with one character changed (always to another character of base64url)."""
    i = where % len(token)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    swapped = alphabet[(alphabet.index(token[i]) + 1 + where % 63) % 64]
    return token[:i] + swapped + token[i + 1:]


class RoundsMachine(RuleBasedStateMachine):
    states = Bundle("states")
    carts = Bundle("carts")

    def __init__(self, loop: asyncio.AbstractEventLoop, engine: str, folder: Path) -> None:
        super().__init__()
        self.tally = TALLY[engine]
        self.tally.example()
        self.loop = loop
        self.clock = Clock()
        if engine == "memory":
            self.store: Any = MemoryStore(clock=self.clock)
        else:
            self.store = SQLiteStore(folder / f"once-{self.tally.examples}.db", clock=self.clock)
        self.bookings: list[Any] = []
        self.rings = {"A": [KEYS[0]], "B": [KEYS[0]]}
        self.replicas = {name: make_replica(ring, self.clock, self.store, self.bookings)
                         for name, ring in self.rings.items()}
        self.ids = 0
        # the model
        self.expected_bookings: list[Any] = []
        self.redeemed: set[str] = set()

    # -- plumbing ----------------------------------------------------------------------------

    def call(self, replica: str, principal: Any, tool: str, arguments: dict[str, Any],
             **extra: Any) -> dict[str, Any]:
        self.ids += 1
        params = {"name": tool, "arguments": arguments, **extra,
                  "_meta": meta(**{"io.modelcontextprotocol/clientCapabilities": CAPABILITIES})}
        request = Request(self.ids, "tools/call", params)
        reply: dict[str, Any] = self.loop.run_until_complete(
            self.replicas[replica].handle(request, principal=principal))
        check_server_message(MODERN, reply, "tools/call")
        assert reply["id"] == self.ids
        return reply

    def sealing_key(self, replica: str) -> str:
        return self.rings[replica][0]

    def refusal(self, sealed: Sealed, replica: str, principal: Any, kind: str,
                item: str | None) -> str | None:
        """Why the model refuses `sealed` here (the first failing check), or None."""
        if sealed.key not in self.rings[replica]:
            return "key this server does not have"
        if self.clock.now >= sealed.sealed_at + sealed.life:
            return "expired"
        if identity(principal) != sealed.who:
            return "another principal"
        if kind != sealed.kind:
            return "different"
        if item is not None and item != sealed.item:
            return "different arguments"
        return None

    def issued(self, reply: dict[str, Any], replica: str, principal: Any, **facts: Any) -> Sealed:
        result = reply["result"]
        assert result["resultType"] == "input_required", reply
        token = result["requestState"]
        assert type(token) is str and token, reply
        return Sealed(token, who=identity(principal), principal=principal,
                      key=self.sealing_key(replica), sealed_at=self.clock.now, life=STATE_TTL,
                      **facts)

    @staticmethod
    def asked(reply: dict[str, Any]) -> set[str]:
        return set(reply["result"].get("inputRequests", {}))

    @staticmethod
    def text(reply: dict[str, Any]) -> str:
        result = reply["result"]
        assert result["resultType"] == "complete", reply
        return result["content"][0]["text"]  # type: ignore[no-any-return]

    # -- the operator ------------------------------------------------------------------------

    @rule(replica=st.sampled_from("AB"),
          ring=st.lists(st.sampled_from(KEYS), min_size=1, max_size=3, unique=True))
    def redeploy(self, replica: str, ring: list[str]) -> None:
        """A replica restarts with another ring (a rotation step, or a mistake)."""
        self.tally.step()
        self.rings[replica] = ring
        self.replicas[replica] = make_replica(ring, self.clock, self.store, self.bookings)

    @rule(seconds=st.sampled_from([0.25, 1.0, 1.0, 30.0, 59.75, 60.0, 119.75, 120.0]))
    def time_passes(self, seconds: float) -> None:
        self.tally.step()
        self.clock.now += seconds

    # -- the rounds --------------------------------------------------------------------------

    @rule(target=states, replica=st.sampled_from("AB"), principal=st.sampled_from(PRINCIPALS),
          tool=st.sampled_from(TOOLS), item=ITEMS,
          confirm_unasked=st.booleans())
    def start(self, replica: str, principal: Any, tool: str, item: str,
              confirm_unasked: bool) -> Sealed:
        """A first round. Answers sent before being asked (and without a state) count only
        where a single use is not at stake."""
        self.tally.step()
        extra: dict[str, Any] = {}
        if confirm_unasked and tool != "survey":
            extra["inputResponses"] = {"confirm": {"action": "accept", "content": {"ok": True}}}
        reply = self.call(replica, principal, tool, {"item": item}, **extra)
        assert self.asked(reply) == ({"q1"} if tool == "survey" else {"confirm"}), reply
        return self.issued(reply, replica, principal, kind=tool, item=item, rounds=1)

    @rule(target=states, sealed=states, replica=st.sampled_from("AB"), data=st.data(),
          answer=st.sampled_from(["accept", "accept", "decline", "none"]), same_principal=MOSTLY,
          same_item=MOSTLY, same_tool=MOSTLY)
    def retry(self, sealed: Sealed, replica: str, data: st.DataObject, answer: str,
              same_principal: bool, same_item: bool, same_tool: bool) -> Any:
        self.tally.step()
        principal = sealed.principal if same_principal else data.draw(
            st.sampled_from(PRINCIPALS), label="principal")
        item = sealed.item if same_item else data.draw(ITEMS, label="item")
        tool = sealed.kind if same_tool else data.draw(st.sampled_from(TOOLS), label="tool")
        responses: dict[str, Any] = {}
        if answer != "none":
            keys = QUESTIONS[tool]
            for q in data.draw(st.sampled_from([keys[:1], keys[1:], keys]), label="answered"):
                if q == "confirm":
                    responses[q] = {"action": answer, "content": {"ok": True}} \
                        if answer == "accept" else {"action": answer}
                else:
                    responses[q] = {"action": "accept", "content": {"v": f"{q}-{self.ids}"}}
        extra: dict[str, Any] = {"requestState": sealed.token}
        if responses:
            extra["inputResponses"] = responses
        reply = self.call(replica, principal, tool, {"item": item}, **extra)
        why = self.refusal(sealed, replica, principal, tool, item)
        carried = dict(sealed.carried)
        known = {q: carried.get(q) or (self.value(responses[q]) if q in responses else None)
                 for q in QUESTIONS[tool]}
        if why is None and tool != "survey" and known["confirm"] is not None \
                and sealed.token in self.redeemed:
            why = "already used"
        self.tally.saw(f"retry {tool}: {why or 'continues'}")
        if why is not None:
            assert reply.get("error", {}).get("code") == -32602, (why, reply)
            assert why in reply["error"]["message"], (why, reply)
            return multiple()
        if tool != "survey":
            return self.confirmed(reply, sealed, replica, principal, tool, item, known)
        rounds = sealed.rounds + 1
        if known["q1"] is None:
            assert self.asked(reply) == {"q1"}, reply
            return self.issued(reply, replica, principal, kind="survey", item=item,
                               carried=sealed.carried, rounds=rounds)
        if known["q2"] is None:
            assert self.asked(reply) == {"q2"}, reply
            return self.issued(reply, replica, principal, kind="survey", item=item,
                               carried=(("q1", known["q1"]),), rounds=rounds)
        assert self.text(reply) == f"{item}:{known['q1']}/{known['q2']}:{rounds}", reply
        return multiple()

    @staticmethod
    def value(response: dict[str, Any]) -> str:
        """What the model remembers of an answer: the text answered, or the action."""
        content = response.get("content") or {}
        return str(content.get("v", response["action"]))

    def confirmed(self, reply: dict[str, Any], sealed: Sealed, replica: str, principal: Any,
                  tool: str, item: str, known: dict[str, str | None]) -> Any:
        """What a good state brings to a tool with a single-use confirmation."""
        if known["confirm"] is None:
            assert self.asked(reply) == {"confirm"}, reply
            return self.issued(reply, replica, principal, kind=tool, item=item,
                               carried=sealed.carried)
        self.redeemed.add(sealed.token)
        if known["confirm"] != "accept":
            assert self.text(reply) == f"declined {item}", reply
            return multiple()
        if tool == "order" and known["note"] is None:
            assert self.asked(reply) == {"note"}, reply
            return self.issued(reply, replica, principal, kind=tool, item=item,
                               carried=(("confirm", "accept"),))
        self.expected_bookings.append((item, principal_key(principal)))
        done = f"booked {item}" if tool == "book" else f"ordered {item}: {known['note']}"
        assert self.text(reply) == done, reply
        return multiple()

    @rule(sealed=states, replica=st.sampled_from("AB"), where=st.integers(0, 10_000))
    def altered_state(self, sealed: Sealed, replica: str, where: int) -> None:
        """A state with one character changed is refused, whoever presents it."""
        self.tally.step()
        reply = self.call(replica, sealed.principal, sealed.kind, {"item": sealed.item},
                          requestState=tamper(sealed.token, where))
        assert reply.get("error", {}).get("code") == -32602, reply

    # -- handles -----------------------------------------------------------------------------

    @rule(target=carts, replica=st.sampled_from("AB"), principal=st.sampled_from(PRINCIPALS))
    def cart_new(self, replica: str, principal: Any) -> Sealed:
        self.tally.step()
        handle = self.text(self.call(replica, principal, "cart_new", {}))
        return Sealed(handle, "cart", identity(principal), principal, self.sealing_key(replica),
                      self.clock.now, HANDLE_TTL)

    def handle_refused(self, reply: dict[str, Any], why: str) -> None:
        result = reply["result"]
        assert result.get("isError") is True, (why, reply)
        assert why in result["content"][0]["text"], (why, reply)

    @rule(target=carts, cart=carts, replica=st.sampled_from("AB"), item=ITEMS, data=st.data(),
          same_principal=MOSTLY)
    def cart_add(self, cart: Sealed, replica: str, item: str, data: st.DataObject,
                 same_principal: bool) -> Any:
        self.tally.step()
        principal = cart.principal if same_principal else data.draw(
            st.sampled_from(PRINCIPALS), label="principal")
        reply = self.call(replica, principal, "cart_add", {"cart": cart.token, "item": item})
        why = self.refusal(cart, replica, principal, "cart", None)
        self.tally.saw(f"cart: {why or 'opens'}")
        if why is not None:
            self.handle_refused(reply, why)
            return multiple()
        return replace(cart, token=self.text(reply), who=identity(principal), principal=principal,
                       key=self.sealing_key(replica), sealed_at=self.clock.now,
                       items=(*cart.items, item))

    @rule(cart=carts, replica=st.sampled_from("AB"))
    def cart_items(self, cart: Sealed, replica: str) -> None:
        self.tally.step()
        reply = self.call(replica, cart.principal, "cart_items", {"cart": cart.token})
        why = self.refusal(cart, replica, cart.principal, "cart", None)
        if why is not None:
            self.handle_refused(reply, why)
        else:
            assert self.text(reply) == ",".join(cart.items), reply

    @rule(cart=carts, replica=st.sampled_from("AB"))
    def cart_read_as_another_kind(self, cart: Sealed, replica: str) -> None:
        """A cart handle is no draft handle, even for its owner (when it opens at all)."""
        self.tally.step()
        reply = self.call(replica, cart.principal, "draft_read", {"draft": cart.token})
        why = self.refusal(cart, replica, cart.principal, "draft", None)
        self.handle_refused(reply, why or "different kind of handle")

    @rule(cart=carts, sealed=states, replica=st.sampled_from("AB"))
    def tokens_swapped(self, cart: Sealed, sealed: Sealed, replica: str) -> None:
        """A handle presented as a requestState, and a requestState as a handle, never open."""
        self.tally.step()
        reply = self.call(replica, cart.principal, "survey", {"item": "tea"},
                          requestState=cart.token)
        assert reply.get("error", {}).get("code") == -32602, reply
        reply = self.call(replica, sealed.principal, "cart_items", {"cart": sealed.token})
        assert reply["result"].get("isError") is True, reply

    # -- what must hold ----------------------------------------------------------------------

    @invariant()
    def nothing_is_booked_twice_or_unasked(self) -> None:
        assert self.bookings == self.expected_bookings

    def teardown(self) -> None:
        self.loop.run_until_complete(self.store.close())
        self.tally.report()


@pytest.mark.parametrize("engine", ["memory", "sqlite"])
def test_rounds_and_handles_are_refused_and_redeemed_as_the_model_says(
    engine: str, tmp_path: Path,
) -> None:
    loop = asyncio.new_event_loop()
    try:
        run_state_machine_as_test(lambda: RoundsMachine(loop, engine, tmp_path),
                                  settings=machine_settings(30))
    finally:
        loop.close()
