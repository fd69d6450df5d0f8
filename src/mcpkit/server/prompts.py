"""Registered prompts: definitions, argument checks and message conversion, `prompts/list` and
`prompts/get`.

A `prompts/get` whose function raises is a -32603 naming the prompt, with an error id and the
traceback in the log (`mcpkit.server.failures`); one whose function returns what cannot be
messages is a -32603 saying what is wrong with it.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypedDict, Unpack

from mcpkit.errors import InternalError, InvalidParamsError, RPCError
from mcpkit.schema import Signature, derive_signature
from mcpkit.server.content import ContentBlock, is_content_block, json_problem, text_block
from mcpkit.server.context import Context, inject, raises_failures
from mcpkit.server.dependencies import Depends, call_handler, check_dependencies
from mcpkit.server.failures import failure_text
from mcpkit.server.listing import page, require
from mcpkit.server.mrtr import in_rounds
from mcpkit.server.scopes import viewer, visible
from mcpkit.types.methods import Method

__all__ = [
    "Message",
    "Prompt",
    "PromptOptions",
    "build_prompt",
    "get_prompt",
    "list_prompts",
    "prompt_failure",
    "prompt_messages",
]

log = logging.getLogger("mcpkit.server")


@dataclass(frozen=True, slots=True)
class Message:
    """One prompt message; `content` is text, a content helper or a content block dict."""

    role: str
    content: Any

    def __post_init__(self) -> None:
        # Refused where the message is made, so the traceback points at the prompt's own line.
        if self.role not in ("user", "assistant"):
            raise ValueError(f'prompt message role must be "user" or "assistant", not {self.role!r}')

    def to_wire(self) -> dict[str, Any]:
        content = self.content
        if isinstance(content, str):
            block = text_block(content)
        elif isinstance(content, ContentBlock):
            block = content.to_block()
        elif is_content_block(content):
            block = content
        else:
            raise TypeError(f"prompt message content cannot be {type(content).__name__}")
        return {"role": self.role, "content": block}


@dataclass(slots=True)
class Prompt:
    name: str
    fn: Callable[..., Any]
    signature: Signature
    definition: dict[str, Any]
    required: tuple[str, ...]
    is_async: bool
    scopes: tuple[str, ...] = ()
    """The OAuth scopes a `prompts/get` needs (`mcpkit.server.scopes`)."""
    delegate: Callable[[dict[str, Any], Context], Awaitable[dict[str, Any]]] | None = None
    """Who serves it instead: the mounted server it came from (`Server.mount`)."""
    accepted: frozenset[str] = frozenset()
    """The argument names a `prompts/get` passes on to the function."""


class PromptOptions(TypedDict, total=False):
    """What may be said about a prompt besides its function (all optional)."""

    title: str | None
    description: str | None
    """Defaults to the function's docstring."""
    icons: list[dict[str, Any]] | None
    meta: Mapping[str, Any] | None
    arguments: Sequence[Mapping[str, Any]] | None
    """The arguments as `prompts/list` shows them (`{"name": ..., "description": ...,
    "required": ...}`), instead of the function's parameters: each is passed by name, so the
    function takes them as `**arguments` (a prompt whose argument names are not Python names,
    or one whose arguments are known only at run time)."""


def build_prompt(
    fn: Callable[..., Any], *, name: str | None = None, **options: Unpack[PromptOptions]
) -> Prompt:
    prompt_name = name or fn.__name__
    title, description = options.get("title"), options.get("description")
    icons, meta = options.get("icons"), options.get("meta")
    sig = derive_signature(fn, injectables=(Context,), markers=(Depends,),
                           structured_output=False)
    check_dependencies(sig.provided, f"prompt {prompt_name!r}")
    declared = options.get("arguments")
    arguments = []
    if declared is not None:
        arguments = _declared_arguments(prompt_name, declared, fn)
    for p in sig.parameters if declared is None else ():
        arg: dict[str, Any] = {"name": p.name}
        if p.description:
            arg["description"] = p.description
        arg["required"] = p.required
        arguments.append(arg)
    definition: dict[str, Any] = {"name": prompt_name}
    if title:
        definition["title"] = title
    desc = description if description is not None else sig.description
    if desc:
        definition["description"] = desc
    if arguments:
        definition["arguments"] = arguments
    if icons:
        definition["icons"] = list(icons)
    if meta:
        definition["_meta"] = dict(meta)
    if declared is None:
        required = tuple(p.name for p in sig.parameters if p.required)
        accepted = frozenset(p.name for p in sig.parameters)
    else:
        required = tuple(a["name"] for a in arguments if a.get("required"))
        accepted = frozenset(a["name"] for a in arguments)
    return Prompt(prompt_name, fn, sig, definition, required, inspect.iscoroutinefunction(fn),
                  accepted=accepted)


def _declared_arguments(name: str, declared: Sequence[Mapping[str, Any]],
                        fn: Callable[..., Any]) -> list[dict[str, Any]]:
    """`PromptOptions.arguments`, checked: each an object with a string `name` (once), an
    optional string `title` and `description` and a boolean `required`; the function must take
    them as `**arguments`."""
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD
               for p in inspect.signature(fn).parameters.values()):
        raise TypeError(f"prompt {name!r}: declared arguments are passed as keywords; the "
                        "function must take **arguments")
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, raw in enumerate(declared):
        arg = dict(raw) if isinstance(raw, Mapping) else None
        arg_name = arg.get("name") if arg is not None else None
        if arg is None or type(arg_name) is not str or not arg_name or arg_name in seen:
            raise ValueError(f"prompt {name!r}: arguments[{i}] must be an object with a name "
                             "of its own (a non-empty string)")
        for key in ("title", "description"):
            if key in arg and type(arg[key]) is not str:
                raise ValueError(f"prompt {name!r}: arguments[{i}].{key} must be a string")
        if "required" in arg and type(arg["required"]) is not bool:
            raise ValueError(f"prompt {name!r}: arguments[{i}].required must be a boolean")
        seen.add(arg_name)
        out.append({k: arg[k] for k in ("name", "title", "description", "required") if k in arg})
    return out


def check_arguments(prompt: Prompt, args: Any) -> dict[str, Any]:
    if args is None:  # an object of strings otherwise: the row's params check saw to it
        args = {}
    missing = [n for n in prompt.required if n not in args]
    if missing:
        raise InvalidParamsError(
            f"prompts/get {prompt.name!r}: missing required argument(s): {', '.join(missing)}"
        )
    return {k: v for k, v in args.items() if k in prompt.accepted}


def prompt_messages(value: Any) -> list[dict[str, Any]]:
    """`messages` of a GetPromptResult from what a prompt function returned."""
    if isinstance(value, str | ContentBlock) or is_content_block(value):
        return [Message("user", value).to_wire()]
    if isinstance(value, Message):
        return [value.to_wire()]
    if isinstance(value, list | tuple):
        out = []
        for item in value:
            if isinstance(item, Message):
                out.append(item.to_wire())
            elif type(item) is dict and "role" in item and "content" in item:
                out.append(Message(item["role"], item["content"]).to_wire())
            else:
                out.append(Message("user", item).to_wire())
        return out
    raise TypeError(f"a prompt must return text, messages or content, not {type(value).__name__}")


async def list_prompts(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    server = ctx.server
    require(server, "prompts", Method.PROMPTS_LIST)
    seen_by = viewer(ctx)
    return page(server, "prompts", "prompts", params,
                lambda: visible(server.prompts.values(), ctx, seen_by), seen_by)


async def get_prompt(params: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """`prompts/get`: the named prompt's messages for its checked arguments."""
    require(ctx.server, "prompts", Method.PROMPTS_GET)
    name = params["name"]  # a string: the row's params check saw to it
    prompt = ctx.server.prompts.get(name)
    if prompt is None:
        raise InvalidParamsError(f"Unknown prompt: {name!r}", {"name": name})
    if prompt.delegate is not None:
        delegated: dict[str, Any] = await prompt.delegate(params, ctx)
        return delegated
    kwargs = check_arguments(prompt, params.get("arguments"))
    if prompt.signature.injected:
        inject(prompt.signature.injected, kwargs, ctx)
    return await in_rounds(ctx, name, params.get("arguments"), params,
                           partial(_get, prompt, kwargs, ctx))


def _messages(prompt: Prompt, value: Any) -> list[dict[str, Any]]:
    """The messages of what the prompt returned; InternalError saying why it cannot be."""
    try:
        messages = prompt_messages(value)
        problem = json_problem(messages)
    except (TypeError, ValueError) as exc:
        problem = f"what cannot be its messages: {exc}"
    if problem is None:
        return messages
    message = f"prompt {prompt.name!r} returned {problem}"
    log.error("%s", message)  # the server is at fault, and the client may not say so
    raise InternalError(message, {"name": prompt.name})


def prompt_failure(name: str, exc: Exception, ctx: Context) -> InternalError:
    """The -32603 of the prompt `name` whose function raised `exc` (its error id in `data`,
    the traceback logged)."""
    text, error_id = failure_text("prompt", name, exc, expose=ctx.server.options.expose_errors)
    return InternalError(text, {"name": name, "errorId": error_id})


async def _get(prompt: Prompt, kwargs: dict[str, Any], ctx: Context) -> dict[str, Any]:
    try:
        messages = await call_handler(prompt, kwargs, ctx, partial(_messages, prompt))
    except RPCError:
        raise  # a refusal the function means, or ours of what it returned
    except Exception as exc:
        if raises_failures(ctx):
            raise  # a middleware chain is above: the function's exception goes up through it
        raise prompt_failure(prompt.name, exc, ctx) from None
    result: dict[str, Any] = {"resultType": "complete", "messages": messages}
    if prompt.definition.get("description"):
        result["description"] = prompt.definition["description"]
    return result
