"""What an application registers on a server: tools, resources, resource templates, prompts,
the resource fallback and the completion handler, each with its decorator as sugar. Each
definition is built once here (by `tools.py`, `resources.py`, `prompts.py`), admitted, claimed
where the server is mounted and announced.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, Unpack

from mcpkit.server.prompts import Prompt, PromptOptions, build_prompt
from mcpkit.server.resources import (
    CacheHint,
    Fallback,
    Resource,
    ResourceOptions,
    ResourceTemplate,
    TemplateOptions,
    UriTemplate,
    describe,
    has_variables,
    signature_of,
)
from mcpkit.server.scopes import scopes_of
from mcpkit.server.seams import ExtensionSeams
from mcpkit.server.tools import Tool, ToolOptions, build_tool

__all__ = [
    "Registering",
]

F = TypeVar("F", bound=Callable[..., Any])


class Registering(ExtensionSeams):
    """The registration surface of `Server` (its attributes are set by `Server.__init__`)."""

    tools: dict[str, Tool]
    resources: dict[str, Resource]
    templates: list[ResourceTemplate]
    prompts: dict[str, Prompt]
    resource_fallback: Fallback | None

    def add_tool(
        self, fn: Callable[..., Any], name: str | None = None, **options: Unpack[ToolOptions]
    ) -> Tool:
        """Register `fn` as a tool; see `tool()` and `ToolOptions`."""
        tool = build_tool(fn, name, **options)
        if tool.name in self.tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self.admit_tool(tool)
        self._claim("tools", tool.name)
        self.tools[tool.name] = tool
        self._changed("tools")
        return tool

    def remove_tool(self, name: str) -> None:
        if self.tools.pop(name, None) is None:
            raise KeyError(f"no tool named {name!r}")
        self._changed("tools")

    def tool(
        self, name: str | None = None, **options: Unpack[ToolOptions]
    ) -> Callable[[F], F]:
        """Register a function as a tool.

        The input schema comes from the parameters' type hints (or `input_schema`), the
        description from the docstring, the output schema from the return annotation when
        it is structured. A parameter annotated `Context` receives the request context.
        """

        def register(fn: F) -> F:
            self.add_tool(fn, name, **options)
            return fn

        return register

    def add_resource(
        self,
        uri: str,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        cache: CacheHint | None = None,
        scopes: Iterable[str] | None = None,
    ) -> Resource | ResourceTemplate:
        """Register `fn` as the resource at `uri`; a URI with `{variables}` registers a
        template (`add_resource_template`), its variables passed as the parameters of the
        same names."""
        if has_variables(uri):
            if size is not None:
                raise ValueError(
                    f"resource template {uri!r}: size belongs to one resource; a template "
                    "serves many, so it has none"
                )
            return self.add_resource_template(
                uri, fn, name=name, title=title, description=description, mime_type=mime_type,
                annotations=annotations, icons=icons, meta=meta, cache=cache, scopes=scopes,
            )
        if uri in self.resources:
            raise ValueError(f"a resource with URI {uri!r} is already registered")
        self._claim("resources", uri)
        if "://" not in uri and ":" not in uri:
            raise ValueError(f"resource URI {uri!r} has no scheme")
        sig, is_async = signature_of(fn, uri)
        if sig.parameters:
            names = [p.name for p in sig.parameters]
            raise ValueError(
                f"resource {uri!r}: the function takes parameters ({', '.join(names)}) but the "
                f"URI has no variables to fill them; name each in the URI as a template "
                f"variable, e.g. {uri.rstrip('/')}/{{{names[0]}}}"
            )
        doc = description if description is not None else sig.description
        definition = describe(
            "uri", uri, name=name or fn.__name__, title=title, description=doc,
            mime_type=mime_type, annotations=annotations, icons=icons, meta=meta, size=size,
        )
        resource = Resource(fn, sig, definition, mime_type, cache, is_async, uri=uri,
                            scopes=scopes_of(scopes, f"resource {uri!r}"))
        self.resources[uri] = resource
        self._changed("resources")
        return resource

    def resource(self, uri: str, **options: Unpack[ResourceOptions]) -> Callable[[F], F]:
        """Register a function that returns a resource's contents (str, bytes or data).

        A URI with `{variables}` (`"user://{name}/profile"`) registers a resource template:
        each variable is passed as the function's parameter of that name.
        """

        def register(fn: F) -> F:
            self.add_resource(uri, fn, **options)
            return fn

        return register

    def add_resource_template(
        self,
        uri_template: str,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        cache: CacheHint | None = None,
        scopes: Iterable[str] | None = None,
    ) -> ResourceTemplate:
        template = UriTemplate(uri_template)
        sig, is_async = signature_of(fn, uri_template)
        params = [p.name for p in sig.parameters]
        unfilled = [v for v in template.names if v not in params]
        unmatched = [p for p in params if p not in template.names]
        if unfilled or unmatched:
            problems = []
            if unfilled:
                problems.append(f"no parameter takes the variable(s) {', '.join(unfilled)}")
            if unmatched:
                problems.append(f"the parameter(s) {', '.join(unmatched)} match no variable")
            raise ValueError(
                f"resource template {uri_template!r}: {'; '.join(problems)}; the function's "
                f"parameters must be exactly the template's variables "
                f"({', '.join(template.names)})"
            )
        doc = description if description is not None else sig.description
        definition = describe(
            "uriTemplate", uri_template, name=name or fn.__name__, title=title,
            description=doc, mime_type=mime_type, annotations=annotations, icons=icons, meta=meta,
        )
        entry = ResourceTemplate(fn, sig, definition, mime_type, cache, is_async, template=template,
                                 scopes=scopes_of(scopes, f"resource template {uri_template!r}"))
        if any(t.template.template == uri_template for t in self.templates):
            raise ValueError(f"a resource template {uri_template!r} is already registered")
        self._claim("templates", uri_template)
        self.templates.append(entry)
        self._changed("resources")
        return entry

    def resource_template(
        self, uri_template: str, **options: Unpack[TemplateOptions]
    ) -> Callable[[F], F]:
        """Register a function serving every URI that matches an RFC 6570 template."""

        def register(fn: F) -> F:
            self.add_resource_template(uri_template, fn, **options)
            return fn

        return register

    def add_prompt(
        self, fn: Callable[..., Any], *, name: str | None = None,
        scopes: Iterable[str] | None = None, **options: Unpack[PromptOptions],
    ) -> Prompt:
        """Register `fn` as a prompt; see `prompt()`."""
        prompt = build_prompt(fn, name=name, **options)
        prompt.scopes = scopes_of(scopes, f"prompt {prompt.name!r}")
        if prompt.name in self.prompts:
            raise ValueError(f"a prompt named {prompt.name!r} is already registered")
        self._claim("prompts", prompt.name)
        self.prompts[prompt.name] = prompt
        self._changed("prompts")
        return prompt

    def prompt(
        self, name: str | None = None, *, scopes: Iterable[str] | None = None,
        **options: Unpack[PromptOptions],
    ) -> Callable[[F], F]:
        """Register a function that returns a prompt's messages; its parameters are arguments.
        `scopes`: the OAuth scopes a `prompts/get` of it needs."""

        def register(fn: F) -> F:
            self.add_prompt(fn, name=name, scopes=scopes, **options)
            return fn

        return register

    def set_resource_fallback(self, fn: Callable[..., Any] | None, *,
                              mime_type: str | None = None,
                              cache: CacheHint | None = None) -> None:
        """Serve `resources/read` of every URI no resource or template matches: `fn(uri)`
        (with a `Context` parameter when it asks the client, reports progress or logs) returns
        what a resource function returns, or None when it has no such resource (a server
        holding a file tree, a proxy forwarding reads). Nothing of it is listed: list what it
        serves with `add_resource` or templates. None removes it."""
        if fn is None:
            self.resource_fallback = None
        else:
            sig, is_async = signature_of(fn, "resource fallback")
            names = [p.name for p in sig.parameters]
            if names != ["uri"]:
                raise ValueError(
                    "the resource fallback takes the URI read as its one parameter `uri` (and "
                    f"may take a Context), not ({', '.join(names)})"
                )
            definition = {"uri": "*", "name": getattr(fn, "__name__", "fallback")}
            self.resource_fallback = Fallback(fn, sig, definition, mime_type, cache, is_async)
        self._changed()  # the capabilities may change; no list does

    def set_completion(self, fn: Callable[..., Any]) -> None:
        """Set the `completion/complete` handler: fn(ref, argument, context) -> values."""
        if not callable(fn):
            raise TypeError("the completion handler must be callable")
        self.completion = fn
        self._changed()

    def completer(self) -> Callable[[F], F]:
        """Decorator form of `set_completion`."""

        def register(fn: F) -> F:
            self.set_completion(fn)
            return fn

        return register
