"""A git smart-HTTP server on 127.0.0.1 for tests: ``git http-backend`` behind Basic auth.

Every request without the expected ``Authorization`` header gets 401, as a forge answers a
clone or push of a private repository without credentials; each request is recorded.
"""

from __future__ import annotations

import base64
import subprocess
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator
from urllib.parse import urlsplit


class GitHttp:
    def __init__(self, root: Path, user: str, password: str) -> None:
        self.root = root
        self.expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.requests: list[tuple[str, str, bool]] = []  # (method, path, authorized)
        self.url = ""


@contextmanager
def serve_git(root: Path, user: str, password: str) -> Iterator[GitHttp]:
    """Serve the bare repositories under ``root`` at ``server.url`` + ``/<name>.git``."""
    server_state = GitHttp(root, user, password)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._backend()

        def do_POST(self) -> None:
            self._backend()

        def log_message(self, *args: object) -> None:
            pass

        def _backend(self) -> None:
            parts = urlsplit(self.path)
            authorized = self.headers.get("Authorization") == server_state.expected
            server_state.requests.append((self.command, parts.path, authorized))
            if not authorized:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="test"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            env = {"GIT_PROJECT_ROOT": str(server_state.root), "GIT_HTTP_EXPORT_ALL": "1",
                   "PATH_INFO": parts.path, "QUERY_STRING": parts.query,
                   "REQUEST_METHOD": self.command, "REMOTE_USER": user, "REMOTE_ADDR": "127.0.0.1",
                   "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                   "CONTENT_LENGTH": str(len(body)),
                   "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                   "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""), "PATH": "/usr/bin:/bin"}
            out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True,
                                 check=True).stdout
            head, _, payload = out.partition(b"\r\n\r\n")
            status, headers = 200, []
            for line in head.decode().split("\r\n"):
                name, _, value = line.partition(": ")
                if name.lower() == "status":
                    status = int(value.split()[0])
                elif name:
                    headers.append((name, value))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server_state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server_state
    finally:
        server.shutdown()
        server.server_close()
