"""The client's legacy room: everything the 2025-11-25 era means on the client side.

`LegacyAdapter` (`adapter.py`) is the era's `EraAdapter`, made for a connection that took the
`initialize` handshake (`opening.py`, the opener's fallback). Around it: the era's request
shapes and the DiscoverResult built from `initialize` (`shapes.py`), the server's own requests
and the unsolicited notifications of a session turned into subscriptions (`listeners.py`), and
URL elicitation
outside a request: the -32042 error and its one retry (`url_required.py`), the server's reports
that a page is done (`completions.py`). On HTTP, the session `initialize` opened (its id and
version, its headers, resuming its streams, its end on a 404) is `LegacyHTTPSession`
(`http_session.py`), which the HTTP client transport holds once a legacy version is negotiated.

Inside `mcpkit.client` on purpose: the top-level `mcpkit.legacy` is the server's adapter and
sits above `client/`. This package may import the client's era-neutral modules. Of the client,
`client.py` imports the handshake (`opening.py`: `INITIALIZE_OPENING`, the `Fallback` it
gives its opener, which makes the era's adapter); `client.py`, `inputs.py` and the package's
public names import `completions.py` (the public `InputHandlers` carries the `Completions`, and
`Client(on_elicitation_complete=...)` is its handler); of the transports, `http_client.py`
imports `http_session.py`. Nothing is imported here, so a module of
it can be imported alone (`inputs.py` is imported by modules of it).
"""

__all__: list[str] = []
