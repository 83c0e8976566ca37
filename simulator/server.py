"""The simulated platform over real HTTP: a threaded stdlib server in a daemon thread.

This module owns the wire: reading requests, acting out injected faults (which need the
socket itself, to delay or drop), logging API requests, and writing answers with a
correct Content-Length so keep-alive clients such as httpx work.
"""

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self
from urllib.parse import parse_qsl, urlsplit

from simulator.api import handle_api
from simulator.control import handle_control
from simulator.exchange import Request, Response, error_response
from simulator.state import PlatformState
from simulator.times import iso

logger = logging.getLogger(__name__)

CONTROL_PREFIX = "/_control/"
# How often serve_forever checks for stop(); small, so stopping in tests is quick.
_POLL_SECONDS = 0.01


class PlatformServer:
    """Serves a PlatformState over HTTP on host:port (0 picks a free port)."""

    def __init__(
        self,
        state: PlatformState,
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str = "dev-key",
    ) -> None:
        self.state = state
        self._address = (host, port)
        self._api_key = api_key
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        """Bind and serve in a daemon thread; answers self."""
        if self._httpd is not None:
            raise RuntimeError("the platform server is already running")
        self._httpd = _HTTPServer(self._address, self.state, self._api_key)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": _POLL_SECONDS},
            name=f"platform-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, and close connections that keep-alive clients left open."""
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        self._httpd.close_open_connections()
        if self._thread is not None:
            self._thread.join()
        self._httpd = self._thread = None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the platform server is not running")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """The base URL, e.g. "http://127.0.0.1:54321"."""
        return f"http://{self._address[0]}:{self.port}"

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


class _HTTPServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that knows the state and key, and its open connections."""

    # Don't wait for handler threads on close: an idle keep-alive connection would
    # keep its thread reading forever. Open connections are closed explicitly instead.
    block_on_close = False

    def __init__(self, address: tuple[str, int], state: PlatformState, api_key: str) -> None:
        self.state = state
        self.api_key = api_key
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: socket.socket, client_address: object) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: socket.socket) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_open_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: object, client_address: object) -> None:
        # The default prints a traceback to stderr; a client that went away is normal.
        logger.debug("error while serving %s", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body leave in separate writes; with Nagle's algorithm on, the body
    # waits for the client's delayed ACK on every keep-alive request.
    disable_nagle_algorithm = True
    server_version = "AgentOS-simulator"
    sys_version = ""
    # Seconds an idle keep-alive connection may wait for its next request.
    timeout = 30
    server: _HTTPServer

    def do_GET(self) -> None:
        self._answer()

    # One entry for every method: the routes decide which methods a path accepts.
    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def handle(self) -> None:
        try:
            super().handle()
        except ConnectionError:
            # The client hung up mid-request or mid-answer: nobody is left to answer.
            self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:
        # Request lines carry no secrets (the key travels in a header), but stay quiet.
        logger.debug(format, *args)

    def _answer(self) -> None:
        request = self._read_request()
        if request is None:
            return
        if request.path.startswith(CONTROL_PREFIX):
            self._send(self._safely(handle_control, self.server.state, request))
        else:
            self._answer_api(request)

    def _answer_api(self, request: Request) -> None:
        """Act out the next injected fault, if any applies, else answer normally."""
        received_at = time.time()
        state = self.server.state
        fault = state.next_fault(request.path) or {}
        if fault.get("delay"):
            time.sleep(fault["delay"])
        if fault.get("drop"):
            self._record(request, None, received_at)
            self._drop_connection()
            return
        if "status" in fault:
            response = _fault_response(fault["status"])
        else:
            response = self._safely(handle_api, state, request, self.server.api_key)
        self._record(request, response.status, received_at)
        self._send(response)

    def _read_request(self) -> Request | None:
        """The request with its whole body read; None if it was refused already.

        Only Content-Length bodies are read; after anything else the connection's byte
        stream can't be trusted, so it is answered and closed.
        """
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self._refuse(411, "send the body with a Content-Length")
            return None
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0:
            self._refuse(400, "bad Content-Length")
            return None
        url = urlsplit(self.path)
        return Request(
            method=self.command,
            path=url.path,
            query=dict(parse_qsl(url.query, keep_blank_values=True)),
            headers={name.lower(): value for name, value in self.headers.items()},
            # Read even when unused: unread bytes would corrupt the next keep-alive
            # request, and a dropped connection with unread input resets instead.
            body=self.rfile.read(length) if length else b"",
        )

    def _refuse(self, status: int, message: str) -> None:
        self.close_connection = True
        self._send(error_response(status, "invalid_request", message, {"Connection": "close"}))

    def _safely(self, handle: Callable[..., Response], *args: object) -> Response:
        """Run a route handler; a bug in it answers 500 instead of killing the connection."""
        try:
            return handle(*args)
        except Exception:
            logger.exception("the simulated platform failed on %s %s", self.command, self.path)
            return error_response(500, "internal_error", "the simulator failed; see its log")

    def _record(self, request: Request, status: int | None, received_at: float) -> None:
        """Log an API request for tests to inspect, before answering it.

        Recording first means a test that got its answer always finds the entry.
        ``received_at`` is the real epoch time the request was read (``at`` is the
        platform's clock, in whole seconds), for benchmarks timing delivery.
        """
        self.server.state.record_request(
            {
                "method": request.method,
                "path": request.path,
                "query": request.query,
                "headers": _without_secrets(request.headers),
                "body": request.json_or_none(),
                "status": status,
                "at": iso(self.server.state.now()),
                "received_at": received_at,
            }
        )

    def _send(self, response: Response) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(response.body)

    def _drop_connection(self) -> None:
        """Close the socket without a byte of answer, as a crashed proxy would."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def _fault_response(status: int) -> Response:
    headers = {"Retry-After": "1"} if status == 429 else {}
    return error_response(status, "unavailable", "injected fault", headers)


def _without_secrets(headers: dict[str, str]) -> dict[str, str]:
    """The headers with the credential blanked: the API key must never be echoed."""
    logged = dict(headers)
    if "authorization" in logged:
        scheme = logged["authorization"].split(" ", 1)[0]
        logged["authorization"] = f"{scheme} [redacted]"
    return logged
