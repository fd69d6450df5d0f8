"""What a `Host` header may hold (RFC 9112 §3.2, RFC 3986 §3.2.2), and the addresses a
protected server may take its URL from, without I/O.

The expected answers come from the RFCs, not from the parser: literal values the RFCs show or
their grammar allows, and, for any text, a regular expression transcribed from RFC 3986's ABNF
(`reg-name`, `port`) that the parser is held to. A value that names no host is refused with 400
by every policy, even one that allows any host.
"""

from __future__ import annotations

import ipaddress
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from mcpkit.protocol.http import HostPolicy, Status
from mcpkit.protocol.http_host import is_loopback, parse_host

VALID = {
    "www.example.org": ("www.example.org", None),
    "www.example.org:8080": ("www.example.org", 8080),
    "example.com:": ("example.com", None),  # port = *DIGIT: empty is no port
    "192.0.2.16:80": ("192.0.2.16", 80),
    "[2001:db8::7]": ("[2001:db8::7]", None),
    "[2001:db8::7]:443": ("[2001:db8::7]", 443),
    "[::1]:": ("[::1]", None),
    "[::ffff:192.0.2.1]:65535": ("[::ffff:192.0.2.1]", 65535),
    "xn--caf-dma.example": ("xn--caf-dma.example", None),
    "a%2Db.example:0": ("a%2Db.example", 0),
    "": ("", None),  # RFC 9112 §3.2: an empty Host for a target without an authority
}

INVALID = [
    "mcp.example:99999",   # a port past 65535
    "mcp.example:65536",
    "u@a",                 # user information is no part of a Host
    "u@a:80",
    "[::1",                # an unclosed IPv6 literal
    "[::1]x",
    "::1",                 # an IPv6 address without its brackets
    "[zz::1]",
    "[]",
    "host:8x",
    "host:-1",
    "host: 80",
    "ex ample.com",
    "café.example",        # outside ASCII: an IDN travels as its xn-- form
    "a%zz.example",        # a percent sign that is no escape
    "a%2",
    "host:80:80",
    "host/path",
    "host?x",
    "host#x",
]


@pytest.mark.parametrize("value", list(VALID))
def test_a_host_the_rfcs_allow_is_read_as_host_and_port(value: str) -> None:
    assert parse_host(value) == VALID[value]


@pytest.mark.parametrize("value", INVALID)
def test_a_host_outside_the_grammar_names_no_host(value: str) -> None:
    assert parse_host(value) is None


@pytest.mark.parametrize("value", [v for v in INVALID if v.isascii()] + ["café.example"])
@pytest.mark.parametrize("hosts", [None, ("*",), ("*.example",), ("mcp.example",)])
def test_every_policy_answers_a_host_naming_no_host_with_400(
        value: str, hosts: tuple[str, ...] | None) -> None:
    refusal = HostPolicy(hosts).check(value.encode("latin-1"), None)
    assert refusal is not None and refusal.status == Status.BAD_REQUEST
    assert "names no host[:port]" in refusal and "RFC 9112" in refusal


def test_an_allowed_name_still_passes_and_an_unlisted_one_is_403() -> None:
    policy = HostPolicy(("mcp.example",))
    assert policy.check(b"mcp.example:8443", None) is None
    refusal = policy.check(b"other.example", None)
    assert refusal is not None and refusal.status == Status.FORBIDDEN


def test_only_a_wildcard_or_a_suffix_makes_a_policy_open_ended() -> None:
    assert HostPolicy(("*",)).open_ended and HostPolicy(("a.example", "*.b.example")).open_ended
    assert not HostPolicy().open_ended
    assert not HostPolicy(("mcp.example", "api.example:8443", "[2001:db8::1]")).open_ended


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("127.1.2.3", True), ("::1", True), ("[::1]", True),
    ("0.0.0.0", False), ("::", False), ("10.0.0.5", False), ("localhost", False),
    ("/tmp/mcp.sock", False), (None, False), (8000, False),
])
def test_a_loopback_address_is_one_ip_of_this_machine_never_a_wildcard_or_name(
        host: object, loopback: bool) -> None:
    assert is_loopback(host) is loopback


# -- any text, held to RFC 3986's ABNF ------------------------------------------------------------

_UNRESERVED = r"[A-Za-z0-9\-._~]"
_PCT_ENCODED = r"%[0-9A-Fa-f]{2}"
_SUB_DELIMS = r"[!$&'()*+,;=]"
REG_NAME_AND_PORT = re.compile(
    rf"(?:{_UNRESERVED}|{_PCT_ENCODED}|{_SUB_DELIMS})*(?::(?P<port>[0-9]*))?")
"""RFC 3986 §3.2.2 `reg-name` (IPv4 addresses are reg-names too), then `[ ":" port ]`."""


def names_a_host(value: str) -> bool:
    """The oracle: a bracketed IPv6 literal or a reg-name, and a TCP port (0-65535)."""
    if value.startswith("["):
        literal, closed, rest = value[1:].partition("]")
        if not closed:
            return False
        try:
            ipaddress.IPv6Address(literal)
        except ValueError:
            return False
        port = re.fullmatch(r"(?::(?P<port>[0-9]*))?", rest)
    else:
        port = REG_NAME_AND_PORT.fullmatch(value)
    if port is None or not value.isascii():
        return False
    digits = port.group("port") or ""
    return len(digits) <= 5 and (not digits or int(digits) <= 65535)


HOST_TEXT = st.one_of(
    st.text(alphabet="abcXYZ019.-_~%:@[]!$&'()*+,;=/?# é\t", max_size=24),
    st.builds(lambda ip, port: f"[{ip}]" + (f":{port}" if port is not None else ""),
              st.ip_addresses(v=6), st.none() | st.integers(0, 99_999)),
    st.builds(lambda name, port: f"{name}:{port}", st.from_regex(r"[a-z0-9.-]{0,12}",
                                                                 fullmatch=True),
              st.integers(0, 999_999)),
)


@given(HOST_TEXT)
@example("mcp.example:99999")
@example("u@a")
@example("[::1")
@example("a%2g")
def test_any_text_names_a_host_exactly_when_the_abnf_says_so(value: str) -> None:
    named = parse_host(value) is not None
    assert named is names_a_host(value), value
    refusal = HostPolicy(("*",)).check(value.encode("utf-8"), None)
    assert (refusal is not None and refusal.status == Status.BAD_REQUEST) is (
        not names_a_host(value.strip(" \t")))
