"""The task server of tests/helpers/client/task_server.py with task ids that start with `-`, as
another server may choose them (an id is the server's to choose): for the tests that every
`mcpkit task` command, and the hints they print, take such an id."""

from __future__ import annotations

import secrets

from helpers.client.task_server import make

import mcpkit.ext.tasks.runtime as runtime

runtime.new_task_id = lambda: "-SZ6" + secrets.token_hex(12)

server = make()
