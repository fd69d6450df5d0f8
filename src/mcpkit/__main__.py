"""`python -m mcpkit` is the `mcpkit` command."""

from mcpkit.cli.main import main

raise SystemExit(main())
