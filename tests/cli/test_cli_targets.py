"""What a user's first SERVER argument meets: an address without `http://`, a port where
something other than HTTP listens, a port where nothing does."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_run import mcpkit
from helpers.services import free_port


def test_an_address_without_a_scheme_gets_the_url_it_meant(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "tools", "127.0.0.1:8000/mcp")
    assert done.returncode == 2
    assert "did you mean http://127.0.0.1:8000/mcp ?" in done.stderr
    assert "could not start" not in done.stderr


@pytest.fixture(params=["garbage", "close"])
def not_http(request: pytest.FixtureRequest) -> Iterator[int]:
    """A TCP listener on 127.0.0.1 that answers each connection with a non-HTTP greeting, or
    closes it at once; its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                if request.param == "garbage":
                    conn.settimeout(5)
                    try:
                        conn.recv(65536)
                        conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
                    except OSError:
                        pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    listener.close()
    thread.join(5)


def test_a_port_that_does_not_speak_http_is_one_clear_line(tmp_path: Path, not_http: int) -> None:
    done = mcpkit(tmp_path, "tools", f"http://127.0.0.1:{not_http}/mcp", "--timeout", "10")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"127.0.0.1:{not_http} took the connection but did not answer HTTP" in lines[0]
    assert "is this the port of an MCP server?" in lines[0]


def test_a_port_where_nothing_listens_says_so(tmp_path: Path) -> None:
    port = free_port()
    done = mcpkit(tmp_path, "tools", f"http://127.0.0.1:{port}/mcp")
    assert done.returncode == 1
    assert f"nothing is listening at 127.0.0.1:{port}" in done.stderr


@pytest.fixture(params=[405, 501])
def web_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[int]:
    """A plain web server on 127.0.0.1 (the standard library's): a page for GET, and for POST
    405 with an HTML page, or 501 as its file server answers a method it does not serve."""
    import functools
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Page(SimpleHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_error(405, "Method Not Allowed")

        def log_message(self, *args: object) -> None:
            pass

    class Files(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = Page if request.param == 405 else Files
    web = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=tmp_path))
    thread = threading.Thread(target=web.serve_forever, daemon=True)
    thread.start()
    yield web.server_address[1]
    web.shutdown()
    web.server_close()
    thread.join(5)


def test_a_url_that_is_no_mcp_endpoint_says_so_in_one_line(tmp_path: Path,
                                                             web_server: int) -> None:
    done = mcpkit(tmp_path, "tools", f"http://127.0.0.1:{web_server}/")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"mcpkit tools: http://127.0.0.1:{web_server}/ is not an MCP "
                               "endpoint: it answered server/discover with HTTP "), lines[0]
    assert "is the path right?" in lines[0] and "Traceback" not in done.stderr
