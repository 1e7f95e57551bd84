"""Servers that misbehave, on 127.0.0.1: scripted HTTP answers and a listener that never answers.

:func:`serve_scripted` answers each request path with what the test put in ``answers``
(status, headers, body; a path not there gets 404 JSON) and records every request with its
headers, so a test can see exactly what reached a host (a token that should never have).
:func:`silent_listener` accepts TCP connections (the kernel completes the handshake) and never
sends a byte: a git remote or a forge that hangs.
"""

from __future__ import annotations

import json
import socket
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator, Union

Body = Union[bytes, dict, list, str, None]


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]


@dataclass
class Scripted:
    answers: dict[str, tuple[int, dict[str, str], Body]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    url: str = ""

    def answer(self, path: str, status: int, body: Body = None, **headers: str) -> None:
        """Answer ``path`` (without the query) with ``status``, ``body`` (JSON unless bytes)."""
        self.answers[path] = (status, {name.replace("_", "-"): value for name, value in headers.items()}, body)


def _encoded(body: Body, headers: dict[str, str]) -> bytes:
    if isinstance(body, bytes):
        return body
    headers.setdefault("Content-Type", "application/json")
    return json.dumps(body).encode() if body is not None else b""


@contextmanager
def serve_scripted() -> Iterator[Scripted]:
    state = Scripted()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            path = self.path.split("?", 1)[0]
            state.seen.append(Seen(self.command, path, dict(self.headers.items())))
            status, headers, body = state.answers.get(path, (404, {}, {"message": "Not Found"}))
            headers = dict(headers)
            raw = _encoded(body, headers)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def silent_listener() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts connections and never answers."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield sock.getsockname()[1]
