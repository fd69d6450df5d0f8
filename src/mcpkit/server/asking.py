"""What a handler may ask the client for, and the answers it gets back.

A question (`Elicit`, `ElicitURL`, `Sample`, `ListRoots`) knows three things: the wire
`InputRequest` it becomes (built once per question, checked where it is asked), the client
capability it needs (MRTR-10, checked per request by the round), and how to read the client's
answer from `inputResponses` into a value the handler can act on (`Elicited`, `Sampled`, a
list of `Root`). A malformed answer is the client's error (-32602), never a crash.

Imports: `mcpkit.errors`, `mcpkit.types`, `mcpkit.schema`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from mcpkit.errors import InvalidParamsError
from mcpkit.schema import Form, form_of, json_type
from mcpkit.types.methods import Method

__all__ = [
    "Elicit",
    "ElicitURL",
    "Elicited",
    "ListRoots",
    "Question",
    "Root",
    "Sample",
    "Sampled",
    "check_question",
]

Action = Literal["accept", "decline", "cancel"]
_ACTIONS = ("accept", "decline", "cancel")
_CONTEXTS = ("none", "thisServer", "allServers")


@dataclass(frozen=True, slots=True)
class Elicited:
    """The user's answer to an elicitation: accepted (with the form's values), declined or
    cancelled. A handler must be ready for all three (ELIC-14)."""

    action: Action
    content: dict[str, Any] | None
    """The form's values (as the form's Python types) when accepted; None otherwise."""
    raw: dict[str, Any]

    @property
    def accepted(self) -> bool:
        return self.action == "accept"

    def __getitem__(self, name: str) -> Any:
        if self.content is None:
            raise KeyError(f"{name!r}: the elicitation was {self.action}ed, so it has no content")
        return self.content[name]

    def get(self, name: str, default: Any = None) -> Any:
        return default if self.content is None else self.content.get(name, default)


@dataclass(frozen=True, slots=True)
class Sampled:
    """A completion the client's model produced (`CreateMessageResult`)."""

    role: str
    content: Any
    model: str
    stop_reason: str | None
    raw: dict[str, Any]

    @property
    def text(self) -> str:
        """The text blocks of the completion, joined."""
        blocks = self.content if isinstance(self.content, list) else [self.content]
        return "".join(
            b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
            and isinstance(b.get("text"), str)
        )


@dataclass(frozen=True, slots=True)
class Root:
    """A `file://` root the client exposes; guidance, not access control (ROOT-4)."""

    uri: str
    name: str | None = None


class Question:
    """Something a handler asks the client for."""

    __slots__ = ("_request",)
    method: ClassVar[str]

    def __init__(self) -> None:
        self._request: dict[str, Any] | None = None

    @property
    def capability(self) -> dict[str, Any]:
        """The client capabilities this question needs (a ClientCapabilities object)."""
        raise NotImplementedError

    def request(self, where: str) -> dict[str, Any]:
        """The wire `InputRequest` (no jsonrpc, no id), built and checked once."""
        if self._request is None:
            self._request = self._build(where)
        return self._request

    def _build(self, where: str) -> dict[str, Any]:
        raise NotImplementedError

    def read(self, raw: Any, where: str, key: str) -> Any:
        """The answer the client sent under this question's key, checked."""
        raise NotImplementedError


def _bad(where: str, key: str, what: str, detail: str) -> InvalidParamsError:
    return InvalidParamsError(f"{where}: inputResponses[{key!r}] must be {what}; {detail}")


def _object(raw: Any, where: str, key: str, what: str) -> dict[str, Any]:
    if type(raw) is not dict:
        raise _bad(where, key, what, f"got {json_type(raw)}")
    return raw


def _action(raw: dict[str, Any], where: str, key: str) -> Action:
    action = raw.get("action")
    if action not in _ACTIONS:
        raise _bad(where, key, "an ElicitResult", f"action must be accept, decline or cancel, "
                   f"got {action!r}")
    return action  # type: ignore[no-any-return]


def check_question(where: str, key: object, question: object) -> None:
    """Refuse, as the handler's own bug (TypeError), a key or question `ask` cannot send."""
    if not isinstance(key, str) or not key:
        raise TypeError(f"{where}: input request keys must be non-empty strings")
    if not isinstance(question, Question):
        raise TypeError(f"{where}: {key!r} must be an Elicit, ElicitURL, Sample or ListRoots")


class Elicit(Question):
    """Ask the user to fill in a form (form-mode elicitation)."""

    __slots__ = ("_form", "message", "schema")
    method = Method.ELICIT

    def __init__(self, message: str, schema: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        if not isinstance(message, str) or not message:
            raise TypeError("Elicit: the message shown to the user must be a non-empty string")
        self.message = message
        self.schema = schema
        self._form: Form | None = None

    @property
    def capability(self) -> dict[str, Any]:
        return {"elicitation": {"form": {}}}

    def _build(self, where: str) -> dict[str, Any]:
        self._form = form_of(self.schema, where)
        return {
            "method": Method.ELICIT,
            "params": {"message": self.message, "requestedSchema": self._form.schema},
        }

    def read(self, raw: Any, where: str, key: str) -> Elicited:
        self.request(where)
        assert self._form is not None
        answer = _object(raw, where, key, "an ElicitResult")
        action = _action(answer, where, key)
        if action != "accept":
            return Elicited(action, None, answer)
        content = answer.get("content", {})
        if type(content) is not dict:
            raise _bad(where, key, "an ElicitResult", "content must be an object of field values")
        try:
            values = self._form.read(content)
        except ValueError as exc:
            raise InvalidParamsError(
                f"{where}: inputResponses[{key!r}].content does not fit the form: {exc}"
            ) from None
        return Elicited("accept", values, answer)


class ElicitURL(Question):
    """Send the user to a page (URL-mode elicitation): for secrets, payments, third-party
    sign-in. Acceptance means the user agreed to open it, not that they finished (ELIC-9)."""

    __slots__ = ("message", "url")
    method = Method.ELICIT

    def __init__(self, message: str, url: str) -> None:
        super().__init__()
        if not isinstance(message, str) or not message:
            raise TypeError("ElicitURL: the message shown to the user must be a non-empty string")
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("https", "http") or not parts.netloc:
            raise TypeError(f"ElicitURL: url must be an absolute http(s) URL, got {url!r}")
        self.message = message
        self.url = url

    @property
    def capability(self) -> dict[str, Any]:
        return {"elicitation": {"url": {}}}

    def _build(self, where: str) -> dict[str, Any]:
        return {
            "method": Method.ELICIT,
            "params": {"mode": "url", "message": self.message, "url": self.url},
        }

    def read(self, raw: Any, where: str, key: str) -> Elicited:
        answer = _object(raw, where, key, "an ElicitResult")
        return Elicited(_action(answer, where, key), None, answer)


class Sample(Question):
    """Ask the client's model for a completion (deprecated in 2026-07-28 but still served)."""

    __slots__ = ("_capability", "_params")
    method = Method.SAMPLE

    def __init__(
        self,
        prompt: str | Sequence[Mapping[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: Mapping[str, Any] | None = None,
        include_context: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        if isinstance(prompt, str):
            messages: list[Any] = [{"role": "user", "content": {"type": "text", "text": prompt}}]
        else:
            messages = [dict(m) for m in prompt]
            if not messages or not all(
                m.get("role") in ("user", "assistant") and "content" in m for m in messages
            ):
                raise TypeError(
                    'Sample: messages must be a non-empty list of {"role": "user"|"assistant", '
                    '"content": ...}'
                )
        if type(max_tokens) is not int or max_tokens < 1:
            raise TypeError(f"Sample: max_tokens must be a positive integer, got {max_tokens!r}")
        if include_context is not None and include_context not in _CONTEXTS:
            raise TypeError(f"Sample: include_context must be one of {', '.join(_CONTEXTS)}")
        params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens}
        optional = {
            "systemPrompt": system_prompt, "temperature": temperature,
            "stopSequences": list(stop_sequences) if stop_sequences is not None else None,
            "modelPreferences": dict(model_preferences) if model_preferences else None,
            "includeContext": include_context,
            "tools": [dict(t) for t in tools] if tools else None,
            "toolChoice": dict(tool_choice) if tool_choice else None,
            "metadata": dict(metadata) if metadata else None,
        }
        params.update((k, v) for k, v in optional.items() if v is not None)
        sampling: dict[str, Any] = {}
        if tools or tool_choice:
            sampling["tools"] = {}
        if include_context in ("thisServer", "allServers"):
            sampling["context"] = {}
        self._params = params
        self._capability = {"sampling": sampling}

    @property
    def capability(self) -> dict[str, Any]:
        return self._capability

    def _build(self, where: str) -> dict[str, Any]:
        return {"method": Method.SAMPLE, "params": self._params}

    def read(self, raw: Any, where: str, key: str) -> Sampled:
        what = "a CreateMessageResult"
        answer = _object(raw, where, key, what)
        role, model, content = answer.get("role"), answer.get("model"), answer.get("content")
        if role not in ("user", "assistant"):
            raise _bad(where, key, what, f"role must be user or assistant, got {role!r}")
        if type(model) is not str:
            raise _bad(where, key, what, "model (the name of the model used) is required")
        if not (type(content) is dict or (type(content) is list and all(
                type(b) is dict for b in content))):
            raise _bad(where, key, what, "content must be a content block or a list of them")
        stop = answer.get("stopReason")
        return Sampled(role, content, model, stop if isinstance(stop, str) else None, answer)


class ListRoots(Question):
    """Ask which `file://` roots the client exposes (deprecated in 2026-07-28 but still served)."""

    __slots__ = ()
    method = Method.ROOTS_LIST

    @property
    def capability(self) -> dict[str, Any]:
        return {"roots": {}}

    def _build(self, where: str) -> dict[str, Any]:
        return {"method": Method.ROOTS_LIST}

    def read(self, raw: Any, where: str, key: str) -> list[Root]:
        what = 'a ListRootsResult ({"roots": [{"uri": "file://...", "name": ...}]})'
        roots = _object(raw, where, key, what).get("roots")
        if type(roots) is not list:
            raise _bad(where, key, what, "roots must be a list")
        out = []
        for root in roots:
            uri = root.get("uri") if type(root) is dict else None
            if type(uri) is not str or not uri.startswith("file://"):
                raise _bad(where, key, what, f"each root needs a file:// uri, got {uri!r}")
            name = root.get("name")
            out.append(Root(uri, name if isinstance(name, str) else None))
        return out
