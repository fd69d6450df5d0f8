"""`mcpkit dev TARGET`: an inspector in the browser for one server, of either era, over stdio
or HTTP, with the wire in view.

The package sits at the CLI's level: it is a command, and it builds on the public `Client`
(both eras, every transport), the probe's pieces (the era evidence, the token counter) and the
CLI's target and sign-in pieces. Nothing below it imports it. Its modules, by what they hold:

- `guard`: who may talk to the local app (the run's token, Host, Origin), without I/O;
- `web`: the ASGI app (static page, JSON actions, the event stream, the Apps sandbox origin);
- `assets`: the page's files (the `static/` folder, shipped in the wheel), and the headers they
  are served with;
- `events`: the event stream every open page follows, with what a late page must replay;
- `wire`: every JSON-RPC message of the connection, timed, with its HTTP status and headers;
- `copies`: a wire message as a `mcpkit` command line or a curl command;
- `meanings`: what a JSON-RPC error code means, for the wire pane;
- `asking`: the server's questions (forms, pages, sampling, roots) answered from the page;
- `session`: the connection (the `Client`), reconnected, switched between eras, reloaded;
- `catalogue`: what the server offers, with the token budget and the era evidence;
- `actions`: what the page may ask (calls, reads, prompts, completion, subscriptions, answers,
  views, tasks, signing in), one table of them;
- `tasks`: the tasks calls became, followed live;
- `views`: MCP App views prepared for the sandbox, their Content Security Policy built;
- `targets`: what TARGET names, serving a file over HTTP, watching it for `--reload`;
- `command`: the `mcpkit dev` command line.

Nothing is imported until the command runs, so `mcpkit --help` stays quick.
"""

__all__: list[str] = []
