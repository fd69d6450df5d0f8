"""The client's legacy room: everything the 2025-11-25 era means on the client side.

`LegacyAdapter` (`adapter.py`) is the era's `EraAdapter`, picked by the opener for a connection
that took the `initialize` handshake. Around it: the era's request shapes and the DiscoverResult
built from `initialize` (`shapes.py`), the server's own requests and the unsolicited
notifications of a session turned into subscriptions (`listeners.py`), and URL elicitation
outside a request: the -32042 error and its one retry (`url_required.py`), the server's reports
that a page is done (`completions.py`).

Inside `mcpkit.client` on purpose: the top-level `mcpkit.legacy` is the server's adapter and
sits above `client/`. This package may import the client's era-neutral modules; of the client,
only the opener (which picks the adapter), `inputs.py` (whose public `InputHandlers` carries the
`Completions`) and the package's public names import it. Nothing is imported here, so a module
of it can be imported alone.
"""
