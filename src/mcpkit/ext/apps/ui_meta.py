"""The `_meta.ui` of MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`), built and checked.

A view is a `ui://` resource of mime type `text/html;profile=mcp-app`; its `_meta.ui` asks the
host for what the view needs beyond a sandbox that allows nothing: origins to connect to, load
from, frame, or use as a base URI (the host builds the view's Content Security Policy from
them, and never allows an origin not declared), browser permissions, a dedicated sandbox
domain, and whether it wants a border. A tool's `_meta.ui` names the view that shows its
results and who may call it: the model, the view (`"app"`), or both (the default).

Everything here is checked when a server registers it, with a message that names the view or
the tool and says what to write instead: a mistake in a CSP list would otherwise surface only
in a host's console, as a view that silently fails to load its data. An entry in a CSP list is
an origin (`https://api.example.com`, `https://*.example.com` for subdomains), never a CSP
keyword or a bare `*`, which would loosen the policy past what the host is asked to allow.

Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "FLAT_RESOURCE_URI",
    "MIME_TYPE",
    "PERMISSIONS",
    "VISIBILITY",
    "Csp",
    "check_ui_uri",
    "check_visibility",
    "declares_views",
    "tool_ui",
    "view_ui",
]

MIME_TYPE: Final = "text/html;profile=mcp-app"
"""The mime type of an MCP App view, the one a host names in its `mimeTypes`."""

FLAT_RESOURCE_URI: Final = "ui/resourceUri"
"""The deprecated flat tool `_meta` key some older hosts still read instead of `ui.resourceUri`."""

PERMISSIONS: Final = ("camera", "microphone", "geolocation", "clipboardWrite")
"""The browser permissions a view may ask for, as the wire spells them."""

VISIBILITY: Final = ("model", "app")
"""Who may call a tool: the model, the view (through its host), or both (the default)."""

_URI = re.compile(r"ui://[^\s{}]+")
_LABEL = r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)"
_HOST = rf"(?:\*\.)?{_LABEL}(?:\.{_LABEL})*|\[[0-9A-Fa-f:.]+\]"
_ORIGIN = re.compile(rf"(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<host>{_HOST})(?::(?P<port>\d{{1,5}}))?")
_WEB: Final = frozenset({"http", "https"})
_SOCKETS: Final = frozenset({"ws", "wss"})


def check_ui_uri(uri: object, where: str = "an MCP App view") -> str:
    """`uri` if it is a `ui://` URI with something after the scheme; ValueError otherwise."""
    if not isinstance(uri, str):
        raise TypeError(f"{where}: the URI is a string such as 'ui://calendar/week', "
                        f"not {type(uri).__name__}")
    if _URI.fullmatch(uri) is None:
        if "{" in uri or "}" in uri:
            problem = "has template variables; a view is one fixed resource"
        elif not uri.startswith("ui://"):
            problem = "does not use the ui:// scheme MCP Apps requires"
        else:
            problem = "is empty after ui:// or holds whitespace"
        raise ValueError(f"{where}: {uri!r} {problem} (for example 'ui://calendar/week')")
    return uri


def _origin(value: object, field: str, where: str) -> str:
    """One CSP entry, checked to be an origin the field can use."""
    if not isinstance(value, str):
        raise TypeError(f"{where}: csp {field} holds origins (strings), not "
                        f"{type(value).__name__} {value!r}")
    found = _ORIGIN.fullmatch(value)
    if found is None:
        if value.startswith("'") or value in ("*", "data:", "blob:") or value.endswith(":"):
            raise ValueError(
                f"{where}: csp {field} entry {value!r} is a CSP keyword or scheme, not an origin; "
                "the host writes the policy itself and never allows more than the origins "
                "declared, so name each origin, e.g. 'https://api.example.com'")
        rest = value.split("://", 1)
        hint = (" (drop the path, query and trailing slash: an origin is scheme://host[:port])"
                if len(rest) == 2 and re.search(r"[/?#]", rest[1]) else
                " (write it as scheme://host[:port], e.g. 'https://api.example.com')")
        raise ValueError(f"{where}: csp {field} entry {value!r} is not an origin{hint}")
    scheme = found["scheme"]
    allowed = _WEB | _SOCKETS if field == "connectDomains" else _WEB
    if scheme not in allowed:
        use = "http(s) or ws(s)" if field == "connectDomains" else "http or https"
        raise ValueError(f"{where}: csp {field} entry {value!r} uses the scheme {scheme!r}; "
                         f"{field} takes {use} origins")
    port = found["port"]
    if port is not None and not 0 < int(port) < 65536:
        raise ValueError(f"{where}: csp {field} entry {value!r} has port {port}, outside 1-65535")
    return value


def _origins(values: Iterable[str] | None, field: str, where: str) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise TypeError(f"{where}: csp {field} is a list of origins, not "
                        f"{type(values).__name__} {values!r}")
    checked = tuple(_origin(v, field, where) for v in values)
    return tuple(dict.fromkeys(checked))  # in order, once each


@dataclass(frozen=True, slots=True)
class Csp:
    """The origins a view needs, by what it does with them; empty: nothing outside the view.

    `connect_domains`: fetch, XHR, WebSocket (`connect-src`); `resource_domains`: scripts,
    styles, images, fonts, media; `frame_domains`: nested iframes; `base_uri_domains`: the
    document's `<base>`. Checked by `view_ui`, which names the view in any error.
    """

    connect_domains: Sequence[str] = ()
    resource_domains: Sequence[str] = ()
    frame_domains: Sequence[str] = ()
    base_uri_domains: Sequence[str] = ()

    def to_wire(self, where: str = "an MCP App view") -> dict[str, list[str]]:
        """The `csp` object, each list checked; empty lists are left out."""
        fields = (("connectDomains", self.connect_domains),
                  ("resourceDomains", self.resource_domains),
                  ("frameDomains", self.frame_domains),
                  ("baseUriDomains", self.base_uri_domains))
        out: dict[str, list[str]] = {}
        for field, values in fields:
            checked = _origins(values, field, where)
            if checked:
                out[field] = list(checked)
        return out


def _permissions(values: Iterable[str], where: str) -> dict[str, dict[str, Any]]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise TypeError(f"{where}: permissions is a list of names such as ['camera'], not "
                        f"{type(values).__name__} {values!r}")
    out: dict[str, dict[str, Any]] = {}
    for name in values:
        if name not in PERMISSIONS:
            camel = re.sub(r"[-_](\w)", lambda m: m.group(1).upper(), str(name))
            hint = f"; did you mean {camel!r}?" if camel in PERMISSIONS else ""
            raise ValueError(f"{where}: unknown permission {name!r}; MCP Apps knows "
                             f"{', '.join(PERMISSIONS)}{hint}")
        out[name] = {}
    return out


def view_ui(*, csp: Csp | None = None, permissions: Iterable[str] = (),
            domain: str | None = None, prefers_border: bool | None = None,
            where: str = "an MCP App view") -> dict[str, Any]:
    """A view's `_meta.ui`, every part checked (`where` names the view in the errors); an
    empty object when nothing is asked for."""
    ui: dict[str, Any] = {}
    if csp is not None:
        if not isinstance(csp, Csp):
            raise TypeError(f"{where}: csp is a Csp(connect_domains=[...], ...), not "
                            f"{type(csp).__name__}")
        policy = csp.to_wire(where)
        if policy:
            ui["csp"] = policy
    granted = _permissions(permissions, where)
    if granted:
        ui["permissions"] = granted
    if domain is not None:
        if not isinstance(domain, str) or not domain or re.search(r"\s", domain):
            raise ValueError(f"{where}: domain is a non-empty host name in the format the host "
                             f"documents (e.g. 'abc123.example-host.com'), not {domain!r}")
        ui["domain"] = domain
    if prefers_border is not None:
        if not isinstance(prefers_border, bool):
            raise TypeError(f"{where}: prefers_border is True or False, not {prefers_border!r}")
        ui["prefersBorder"] = prefers_border
    return ui


def check_visibility(visibility: Iterable[str], where: str) -> list[str]:
    """`visibility` as a list in the spec's order, checked: a non-empty set of model/app."""
    if isinstance(visibility, str) or not isinstance(visibility, Iterable):
        raise TypeError(f"{where}: visibility is a list such as ['model', 'app'], not "
                        f"{type(visibility).__name__} {visibility!r}")
    given = list(visibility)
    unknown = [v for v in given if v not in VISIBILITY]
    if unknown:
        raise ValueError(f"{where}: unknown visibility {unknown[0]!r}; use 'model', 'app' "
                         "or both")
    if not given:
        raise ValueError(f"{where}: visibility is empty, so nobody could call the tool; "
                         "use ['model'], ['app'] or both")
    return [v for v in VISIBILITY if v in given]


def tool_ui(resource_uri: str, visibility: Iterable[str] = VISIBILITY,
            where: str = "a tool") -> dict[str, Any]:
    """A tool's `_meta.ui`: the view that shows its results and who may call it."""
    return {"resourceUri": check_ui_uri(resource_uri, where),
            "visibility": check_visibility(visibility, where)}


def declares_views(settings: Mapping[str, Any] | None) -> bool:
    """Whether a request's Apps settings (`ctx.client_extension(APPS)`) name the view mime
    type among their `mimeTypes`: a host that declared the extension for other kinds of views
    cannot show these."""
    if settings is None:
        return False
    types = settings.get("mimeTypes")
    return isinstance(types, list) and MIME_TYPE in types
