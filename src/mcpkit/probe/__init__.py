"""`mcpkit probe`, `snapshot` and `diff`: inspecting a server from the outside.

The package sits at the CLI's level (it may import any layer below, and nothing imports it
but `mcpkit.cli.probe`). Its modules, by what they hold:

- `channels`: raw request channels (a stdio line channel to the server process, httpx for
  HTTP) that keep every answer as evidence;
- `walk`: the era walk, its steps, and the settled `Session`;
- `catalogue`: listing everything per capability set (`CAPSETS`);
- `checks`: the wire-rule table and its checks;
- `budget`: token counts (offline, the `probe` extra);
- `lint`: the lint rule table;
- `report`: one probe start to end, and its JSON document;
- `surface`: snapshots and their diff;
- `terminal`, `page`: the human view and the self-contained HTML page.

Nothing is imported until used, so `mcpkit --help` stays quick.
"""

__all__: list[str] = []
