"""Multi round-trip requests through the public API, over a real stream connection: asking,
retrying, the sealed requestState and every way a retry can be refused."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcpkit import Context, Server, ServerOptions, ToolError
from mcpkit.server.asking import Elicit, ListRoots, Sample
from mcpkit.server.sealing import new_state_key

KEY = new_state_key()
OTHER_KEY = new_state_key()
ALL_CAPS = {"elicitation": {}, "sampling": {}, "roots": {}}
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def make_server(**options: Any) -> Server:
    options.setdefault("state_keys", (KEY,))
    server = Server("mrtr-test", "1.0.0", options=ServerOptions(**options))

    @server.tool()
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Asks for the user's name."""
        answer = await ctx.elicit("user_name", "What is your name?", {"name": str})
        return f"Hello, {answer['name']}!" if answer.accepted else f"No name ({answer.action})"

    @server.tool()
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Asks the client's model a question."""
        sampled = await ctx.sample("capital_question", "What is the capital of France?",
                                   max_tokens=100)
        return f"The model ({sampled.model}) said: {sampled.text}"

    @server.tool()
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Asks for the client's roots."""
        roots = await ctx.roots("client_roots")
        return "Roots: " + ", ".join(f"{r.name}={r.uri}" for r in roots)

    @server.tool()
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """Keeps a value in ctx.state across the rounds."""
        first_round = "started" not in ctx.state
        ctx.state["started"] = True
        await ctx.elicit("confirm", "Please confirm", {"ok": bool})
        return "state-missing" if first_round else "state-ok"

    @server.tool()
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Asks three kinds of question at once."""
        answers = await ctx.ask({
            "user_name": Elicit("What is your name?", {"name": str}),
            "greeting": Sample("Generate a greeting", max_tokens=50),
            "client_roots": ListRoots(),
        })
        return f"{answers['greeting'].text} {answers['user_name']['name']} " \
               f"({len(answers['client_roots'])} roots)"

    @server.tool()
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Asks one question per round, twice."""
        one = await ctx.elicit("step1", "Step 1: What is your name?", {"name": str})
        two = await ctx.elicit("step2", "Step 2: What is your favorite color?", {"color": str})
        return f"{one['name']} likes {two['color']}"

    @server.tool()
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Asks only what the client declared."""
        answers = await ctx.ask({
            "user_name": Elicit("What is your name?", {"name": str}),
            "capital": Sample("What is the capital of France?", max_tokens=100),
        }, skip_unsupported=True)
        return f"asked {sorted(k for k, v in answers.items() if v is not None)}"

    @server.tool()
    async def book(title: str, ctx: Context) -> str:
        """Asks when, for a title."""
        when = await ctx.elicit("when", f'When should "{title}" start?', {"startsAt": str})
        return f"{title} at {when['startsAt']}"

    @server.tool()
    async def redeem_voucher(code: str, ctx: Context) -> str:
        """A one-time action: the confirmation counts once."""
        answer = await ctx.elicit("confirm", f"Redeem voucher {code}?", single_use=True)
        return f"redeemed {code}" if answer.accepted else "kept"

    @server.tool()
    async def needs_sampling(ctx: Context) -> str:
        """Fails with -32021 for a client without sampling."""
        return (await ctx.sample("q", "Say hi", max_tokens=5)).text

    @server.tool()
    async def sign_in(ctx: Context) -> str:
        """Wrongly asks for a password in a form."""
        await ctx.elicit("credentials", "Sign in", {"username": str, "password": str})
        return "never"

    @server.tool()
    async def swallowing(ctx: Context) -> str:
        """Catches every Exception: the signal to ask is not one."""
        try:
            await ctx.elicit("x", "Anything?")
        except Exception:
            return "swallowed"
        return "answered"

    @server.tool()
    def new_cart(item: str, ctx: Context) -> str:
        """Starts a cart and hands it back as a handle."""
        return ctx.mint_handle("cart", {"items": [item]}, ttl=60)

    @server.tool()
    def cart_items(cart: str, ctx: Context) -> str:
        """Reads a cart from its handle."""
        return ", ".join(ctx.open_handle("cart", cart)["items"])

    @server.tool()
    def draft_items(draft: str, ctx: Context) -> str:
        """Reads a draft: a cart handle is the wrong kind here."""
        return str(ctx.open_handle("draft", draft))

    @server.prompt()
    async def test_input_required_result_prompt(ctx: Context) -> str:
        """Asks for context before writing the prompt."""
        answer = await ctx.elicit("user_context", "What is it about?", {"context": str})
        return f"Write about {answer['context']}"

    @server.resource("test://asking", mime_type="text/plain")
    async def asking_resource(ctx: Context) -> str:
        """Asks which flavour to read."""
        answer = await ctx.elicit("flavour", "Which flavour?", {"flavour": str})
        return f"flavour: {answer['flavour']}"

    return server


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "Paris."},
           "model": "test-model", "stopReason": "endTurn"}
ROOTS = {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}


async def call(wire: Any, name: str, arguments: dict[str, Any] | None = None,
               caps: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {}, **extra}
    meta = {CAPS_KEY: ALL_CAPS if caps is None else caps}
    return await wire.request("tools/call", params, **meta)


def text_of(reply: dict[str, Any]) -> str:
    result = reply["result"]
    assert result["resultType"] == "complete", result
    return str(result["content"][0]["text"])


def error_of(reply: dict[str, Any], code: int = -32602) -> str:
    assert "error" in reply, reply
    assert reply["error"]["code"] == code, reply["error"]
    return str(reply["error"]["message"])


# -- the conformance fixtures' flows -----------------------------------------------------------


async def test_elicitation_asks_then_completes_on_the_retry(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    first = (await call(wire, "test_input_required_result_elicitation"))["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {"user_name": {"method": "elicitation/create", "params": {
        "message": "What is your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                            "required": ["name"]}}}}
    assert isinstance(first["requestState"], str)
    assert first["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mrtr-test"
    assert "ttlMs" not in first and "cacheScope" not in first
    reply = await call(wire, "test_input_required_result_elicitation",
                       inputResponses={"user_name": accept(name="Alice")},
                       requestState=first["requestState"])
    assert text_of(reply) == "Hello, Alice!"


async def test_a_retry_without_request_state_carrying_the_answer_completes(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    reply = await call(wire, "test_input_required_result_elicitation", inputResponses={
        "user_name": accept(name="Bob"), "unknown_1": {"x": 1}, "unknown_2": 5})
    assert text_of(reply) == "Hello, Bob!"


async def test_a_retry_answering_the_wrong_key_is_asked_again(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    reply = await call(wire, "test_input_required_result_elicitation",
                       inputResponses={"wrong_key": accept(name="Eve")})
    assert list(reply["result"]["inputRequests"]) == ["user_name"]


@pytest.mark.parametrize("responses", [None, 12345, "text", []])
async def test_input_responses_that_are_not_an_object_are_invalid_params(
    wire_factory: Any, responses: Any
) -> None:
    wire = wire_factory(make_server())
    message = error_of(await call(wire, "test_input_required_result_elicitation",
                                  inputResponses=responses))
    assert "tools/call 'test_input_required_result_elicitation'" in message
    assert "inputResponses must be an object" in message


@pytest.mark.parametrize("answer, fragment", [
    (12345, "must be an ElicitResult"),
    (None, "must be an ElicitResult"),
    ({"action": "maybe"}, "action must be accept, decline or cancel"),
    ({"action": "accept", "content": "Alice"}, "content must be an object"),
    ({"action": "accept", "content": {"name": 5}}, "name: expected string"),
    ({"action": "accept", "content": {}}, "name: missing required"),
])
async def test_a_malformed_answer_is_invalid_params_never_a_result(
    wire_factory: Any, answer: Any, fragment: str
) -> None:
    wire = wire_factory(make_server())
    message = error_of(await call(wire, "test_input_required_result_elicitation",
                                  inputResponses={"user_name": answer}))
    assert "inputResponses['user_name']" in message and fragment in message


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_and_cancel_reach_the_handler(wire_factory: Any, action: str) -> None:
    wire = wire_factory(make_server())
    reply = await call(wire, "test_input_required_result_elicitation",
                       inputResponses={"user_name": {"action": action}})
    assert text_of(reply) == f"No name ({action})"


async def test_sampling_round_trip(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    first = (await call(wire, "test_input_required_result_sampling"))["result"]
    assert first["inputRequests"]["capital_question"] == {
        "method": "sampling/createMessage",
        "params": {"messages": [{"role": "user", "content": {
            "type": "text", "text": "What is the capital of France?"}}], "maxTokens": 100}}
    reply = await call(wire, "test_input_required_result_sampling",
                       inputResponses={"capital_question": SAMPLED},
                       requestState=first["requestState"])
    assert text_of(reply) == "The model (test-model) said: Paris."


async def test_roots_round_trip_and_non_file_roots_are_refused(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    first = (await call(wire, "test_input_required_result_list_roots"))["result"]
    assert first["inputRequests"] == {"client_roots": {"method": "roots/list"}}
    reply = await call(wire, "test_input_required_result_list_roots",
                       inputResponses={"client_roots": ROOTS}, requestState=first["requestState"])
    assert text_of(reply) == "Roots: Test Root=file:///test/root"
    bad = await call(wire, "test_input_required_result_list_roots",
                     inputResponses={"client_roots": {"roots": [{"uri": "https://x"}]}})
    assert "file://" in error_of(bad)


async def test_handler_state_comes_back_only_through_request_state(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    name = "test_input_required_result_request_state"
    first = (await call(wire, name))["result"]
    assert set(first) >= {"inputRequests", "requestState"}
    answers = {"confirm": accept(ok=True)}
    assert text_of(await call(wire, name, inputResponses=answers,
                              requestState=first["requestState"])) == "state-ok"
    assert text_of(await call(wire, name, inputResponses=answers)) == "state-missing"


async def test_elicitation_sampling_and_roots_in_one_round(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    name = "test_input_required_result_multiple_inputs"
    first = (await call(wire, name))["result"]
    methods = {k: v["method"] for k, v in first["inputRequests"].items()}
    assert methods == {"user_name": "elicitation/create", "greeting": "sampling/createMessage",
                       "client_roots": "roots/list"}
    partial = await call(wire, name, inputResponses={"user_name": accept(name="Ann")},
                         requestState=first["requestState"])
    still = partial["result"]
    assert set(still["inputRequests"]) == {"greeting", "client_roots"}
    reply = await call(wire, name, requestState=still["requestState"], inputResponses={
        "greeting": SAMPLED, "client_roots": ROOTS})
    assert text_of(reply) == "Paris. Ann (1 roots)"


async def test_two_rounds_each_with_a_new_state(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    name = "test_input_required_result_multi_round"
    r1 = (await call(wire, name))["result"]
    assert list(r1["inputRequests"]) == ["step1"]
    r2 = (await call(wire, name, inputResponses={"step1": accept(name="Ann")},
                     requestState=r1["requestState"]))["result"]
    assert list(r2["inputRequests"]) == ["step2"]
    assert r2["requestState"] != r1["requestState"]
    r3 = await call(wire, name, inputResponses={"step2": accept(color="green")},
                    requestState=r2["requestState"])
    assert text_of(r3) == "Ann likes green"


async def test_only_declared_capabilities_are_asked(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    name = "test_input_required_result_capabilities"
    first = (await call(wire, name, caps={"sampling": {}}))["result"]
    assert first["resultType"] == "input_required"
    assert {v["method"] for v in first["inputRequests"].values()} == {"sampling/createMessage"}
    reply = await call(wire, name, caps={"sampling": {}}, inputResponses={"capital": SAMPLED},
                       requestState=first["requestState"])
    assert text_of(reply) == "asked ['capital']"


async def test_an_undeclared_capability_is_32021_naming_it(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    reply = await call(wire, "needs_sampling", caps={"elicitation": {}})
    message = error_of(reply, -32021)
    assert reply["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
    assert "tools/call 'needs_sampling'" in message and "sampling" in message


async def test_url_only_elicitation_does_not_cover_forms(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    reply = await call(wire, "test_input_required_result_elicitation",
                       caps={"elicitation": {"url": {}}})
    error_of(reply, -32021)
    assert reply["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}


async def test_prompts_may_ask(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    meta = {CAPS_KEY: ALL_CAPS}
    first = (await wire.request("prompts/get", {"name": "test_input_required_result_prompt"},
                                **meta))["result"]
    assert first["resultType"] == "input_required" and "user_context" in first["inputRequests"]
    reply = await wire.request("prompts/get", {
        "name": "test_input_required_result_prompt", "requestState": first["requestState"],
        "inputResponses": {"user_context": accept(context="tides")}}, **meta)
    assert reply["result"]["messages"][0]["content"]["text"] == "Write about tides"


async def test_resources_may_ask_and_the_question_is_never_cached(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    meta = {CAPS_KEY: ALL_CAPS}
    first = (await wire.request("resources/read", {"uri": "test://asking"}, **meta))["result"]
    assert first["resultType"] == "input_required"
    assert "ttlMs" not in first and "cacheScope" not in first
    reply = await wire.request("resources/read", {
        "uri": "test://asking", "requestState": first["requestState"],
        "inputResponses": {"flavour": accept(flavour="lemon")}}, **meta)
    assert reply["result"]["contents"][0]["text"] == "flavour: lemon"
    assert "ttlMs" in reply["result"]


async def test_list_methods_never_answer_input_required(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    for method in ("tools/list", "prompts/list", "resources/list"):
        assert (await wire.request(method))["result"]["resultType"] == "complete"


async def test_a_handlers_except_exception_does_not_swallow_the_question(
    wire_factory: Any
) -> None:
    wire = wire_factory(make_server())
    reply = await call(wire, "swallowing")
    assert reply["result"]["resultType"] == "input_required"


# -- the sealed requestState: each refusal says why ---------------------------------------------


async def first_state(wire: Any, name: str = "test_input_required_result_elicitation",
                      arguments: dict[str, Any] | None = None) -> str:
    return str((await call(wire, name, arguments))["result"]["requestState"])


async def test_a_tampered_state_is_a_json_rpc_error_and_logged(
    wire_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    wire = wire_factory(make_server())
    state = await first_state(wire)
    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        reply = await call(wire, "test_input_required_result_elicitation",
                           requestState=state + "-TAMPERED",
                           inputResponses={"user_name": accept(name="Mallory")})
    message = error_of(reply)
    assert "requestState" in message
    assert reply["error"]["data"]["reason"] in ("malformed", "integrity")
    assert "rejected requestState on tools/call" in caplog.text


async def test_a_truncated_state_is_rejected(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    state = await first_state(wire)
    reply = await call(wire, "test_input_required_result_elicitation", requestState=state[:16])
    assert "truncated" in error_of(reply)


async def test_an_expired_state_is_rejected(wire_factory: Any) -> None:
    clock = Clock()
    wire = wire_factory(make_server(clock=clock, state_ttl=60))
    state = await first_state(wire)
    clock.now += 61
    reply = await call(wire, "test_input_required_result_elicitation", requestState=state)
    assert "expired 1 s ago" in error_of(reply)


async def test_a_state_presented_by_another_principal_is_rejected(wire_factory: Any) -> None:
    server = make_server()
    alice, bob = wire_factory(server), wire_factory(server)
    alice.conn.principal, bob.conn.principal = "alice", "bob"
    state = await first_state(alice)
    reply = await call(bob, "test_input_required_result_elicitation", requestState=state)
    assert "another principal" in error_of(reply)
    assert reply["error"]["data"] == {"reason": "principal"}


async def test_a_state_presented_to_another_tool_is_rejected(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    state = await first_state(wire)
    reply = await call(wire, "test_input_required_result_request_state", requestState=state)
    assert "issued for a different tool" in error_of(reply)


async def test_a_state_presented_with_other_arguments_is_rejected(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    state = await first_state(wire, "book", {"title": "Dentist"})
    reply = await call(wire, "book", {"title": "Dentist"}, requestState=state,
                       inputResponses={"when": accept(startsAt="9am")})
    assert text_of(reply) == "Dentist at 9am"
    reply = await call(wire, "book", {"title": "Bank heist"}, requestState=state)
    assert "different arguments" in error_of(reply)


async def test_a_request_state_that_is_not_a_string_is_rejected(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    for bad in (None, 5, ""):
        reply = await call(wire, "test_input_required_result_elicitation", requestState=bad)
        assert "echoed unchanged" in error_of(reply)


async def test_a_state_survives_key_rotation_and_dies_with_the_retired_key(
    wire_factory: Any
) -> None:
    before = wire_factory(make_server(state_keys=(KEY,)))
    state = await first_state(before)
    rotated = wire_factory(make_server(state_keys=(OTHER_KEY, KEY)))
    reply = await call(rotated, "test_input_required_result_elicitation", requestState=state,
                       inputResponses={"user_name": accept(name="Ann")})
    assert text_of(reply) == "Hello, Ann!"
    retired = wire_factory(make_server(state_keys=(OTHER_KEY,)))
    reply = await call(retired, "test_input_required_result_elicitation", requestState=state)
    assert "key this server does not have" in error_of(reply)


async def test_without_configured_keys_servers_share_the_persisted_ring(
    wire_factory: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.delenv("MCPKIT_STATE_KEYS", raising=False)
    monkeypatch.setenv("MCPKIT_DATA_DIR", str(tmp_path / "data"))
    one, two = make_server(state_keys=()), make_server(state_keys=())
    with caplog.at_level(logging.WARNING):
        state = await first_state(wire_factory(one))
        reply = await call(wire_factory(two), "test_input_required_result_elicitation",
                           requestState=state, inputResponses={"user_name": accept(name="Bo")})
    assert text_of(reply) == "Hello, Bo!"
    assert not one.sealer.ephemeral and (tmp_path / "data" / "state-keys").is_file()
    assert caplog.text == ""


async def test_without_a_place_for_the_ring_each_server_has_its_own_key_and_says_so_once(
    wire_factory: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.delenv("MCPKIT_STATE_KEYS", raising=False)
    (tmp_path / "a-file").write_text("not a folder")
    monkeypatch.setenv("MCPKIT_DATA_DIR", str(tmp_path / "a-file" / "mcpkit"))
    one, two = make_server(state_keys=()), make_server(state_keys=())
    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        state = await first_state(wire_factory(one))
        await first_state(wire_factory(one))
        reply = await call(wire_factory(two), "test_input_required_result_elicitation",
                           requestState=state)
    assert "key this server does not have" in error_of(reply)
    assert one.sealer.ephemeral and two.sealer.ephemeral
    warnings = [r.getMessage() for r in caplog.records if "cannot keep state keys" in r.getMessage()]
    assert len(warnings) == 2, warnings  # once per server, not once per state
    assert "\n" not in warnings[0] and str(tmp_path / "a-file") in warnings[0]
    assert "MCPKIT_STATE_KEYS" in warnings[0] and "MCPKIT_DATA_DIR" in warnings[0]


async def test_keys_may_come_from_the_environment(
    wire_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPKIT_STATE_KEYS", f"{OTHER_KEY}, {KEY}")
    from_env = make_server(state_keys=())
    assert not from_env.sealer.ephemeral
    state = await first_state(wire_factory(make_server(state_keys=(KEY,))))
    reply = await call(wire_factory(from_env), "test_input_required_result_elicitation",
                       requestState=state, inputResponses={"user_name": accept(name="Env")})
    assert text_of(reply) == "Hello, Env!"


def test_a_bad_configured_key_fails_at_startup() -> None:
    with pytest.raises(ValueError, match="state key #1"):
        make_server(state_keys=("too-short",))


# -- single use --------------------------------------------------------------------------------


async def test_a_single_use_confirmation_counts_once(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    first = (await call(wire, "redeem_voucher", {"code": "X1"}))["result"]
    answers = {"confirm": {"action": "accept"}}
    done = await call(wire, "redeem_voucher", {"code": "X1"}, inputResponses=answers,
                      requestState=first["requestState"])
    assert text_of(done) == "redeemed X1"
    replay = await call(wire, "redeem_voucher", {"code": "X1"}, inputResponses=answers,
                        requestState=first["requestState"])
    assert "already used" in error_of(replay)
    assert replay["error"]["data"] == {"reason": "replayed"}


async def test_a_single_use_answer_without_state_is_asked_for_again(wire_factory: Any) -> None:
    wire = wire_factory(make_server())
    reply = await call(wire, "redeem_voucher", {"code": "X2"},
                       inputResponses={"confirm": {"action": "accept"}})
    assert reply["result"]["resultType"] == "input_required"


async def test_single_use_holds_across_servers_sharing_a_sqlite_store(
    wire_factory: Any, tmp_path: Any
) -> None:
    from mcpkit.store.sqlite import SQLiteStore

    first_server = make_server(store=SQLiteStore(tmp_path / "once.db"))
    second_server = make_server(store=SQLiteStore(tmp_path / "once.db"))
    one, two = wire_factory(first_server), wire_factory(second_server)
    state = (await call(one, "redeem_voucher", {"code": "X3"}))["result"]["requestState"]
    answers = {"confirm": {"action": "accept"}}
    assert text_of(await call(one, "redeem_voucher", {"code": "X3"}, inputResponses=answers,
                              requestState=state)) == "redeemed X3"
    replay = await call(two, "redeem_voucher", {"code": "X3"}, inputResponses=answers,
                        requestState=state)
    assert "already used" in error_of(replay)


# -- handles -----------------------------------------------------------------------------------


async def test_a_handle_opens_for_its_owner_and_not_for_anyone_else(wire_factory: Any) -> None:
    server = make_server()
    alice, bob = wire_factory(server), wire_factory(server)
    alice.conn.principal, bob.conn.principal = "alice", "bob"
    handle = text_of(await call(alice, "new_cart", {"item": "apples"}))
    assert "apples" not in handle
    assert text_of(await call(alice, "cart_items", {"cart": handle})) == "apples"
    stolen = (await call(bob, "cart_items", {"cart": handle}))["result"]
    assert stolen["isError"] is True
    assert "issued to another principal" in stolen["content"][0]["text"]
    assert "not a permission" in stolen["content"][0]["text"]


async def test_a_handle_is_refused_when_expired_tampered_or_of_another_kind(
    wire_factory: Any
) -> None:
    clock = Clock()
    wire = wire_factory(make_server(clock=clock))
    handle = text_of(await call(wire, "new_cart", {"item": "pears"}))
    wrong_kind = (await call(wire, "draft_items", {"draft": handle}))["result"]
    assert "different kind of handle" in wrong_kind["content"][0]["text"]
    # Two characters changed: "AA" unless the handle already ends so (one in about a thousand).
    altered = handle[:-2] + ("BA" if handle.endswith("AA") else "AA")
    tampered = (await call(wire, "cart_items", {"cart": altered}))["result"]
    assert tampered["isError"] and "altered" in tampered["content"][0]["text"]
    clock.now += 61
    expired = (await call(wire, "cart_items", {"cart": handle}))["result"]
    assert expired["isError"] and "expired" in expired["content"][0]["text"]


# -- programming errors surface where they are made ---------------------------------------------


async def test_a_form_asking_for_a_password_is_refused_pointing_to_url_mode(
    wire_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    wire = wire_factory(make_server())
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        reply = await call(wire, "sign_in")
    # A tool's bug like any other: isError with an error id, the reason in the log.
    assert reply["result"]["isError"] is True
    assert reply["result"]["content"][0]["text"].startswith("tool 'sign_in' failed (error id ")
    assert "form field 'password'" in caplog.text and "elicit_url" in caplog.text


async def test_asking_outside_the_three_asking_methods_is_a_programming_error() -> None:
    from mcpkit.protocol.envelope import RequestMeta

    ctx = Context(make_server(), "completion/complete", 1, RequestMeta("2026-07-28", ALL_CAPS),
                  None)
    with pytest.raises(RuntimeError, match="only tools/call, prompts/get and resources/read"):
        await ctx.elicit("x", "Anything?")
    with pytest.raises(RuntimeError):
        ctx.state["x"] = 1


async def test_a_tool_error_after_an_answer_is_still_an_error_result(wire_factory: Any) -> None:
    server = make_server()

    @server.tool()
    async def strict(ctx: Context) -> str:
        answer = await ctx.elicit("go", "Proceed?")
        if not answer.accepted:
            raise ToolError("The user said no; nothing was done.")
        return "done"

    wire = wire_factory(server)
    reply = (await call(wire, "strict", inputResponses={"go": {"action": "decline"}}))["result"]
    assert reply["isError"] is True and "nothing was done" in reply["content"][0]["text"]
