"""A page's event stream read as a browser's EventSource reads it: over real HTTP, from the ASGI live server."""

from __future__ import annotations

import contextlib
import http.client
import json
import queue
import socket
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

from reviewqueue import changes
from tests.helpers.browser import session_cookies


@dataclass
class Event:
    kind: str
    data: dict
    id: int | None


class Stream:
    """``user``'s stream on ``live_server``, read in a thread; ``next`` waits for its next event, ``close`` cuts it
    as a closed tab does (the server sees the connection go)."""

    def __init__(self, live_server, user, *, since: int | None = None, last_event_id: int | None = None, cookies=None):
        self.cookies = cookies or {cookie["name"]: cookie["value"] for cookie in session_cookies(user, "")}
        url = changes.STREAM_PATH + ("" if since is None else f"?since={since}")
        headers = {"Cookie": "; ".join(f"{name}={value}" for name, value in self.cookies.items())}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        address = urlsplit(live_server.url)
        self._connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
        self._connection.request("GET", url, headers=headers)
        response = self._connection.getresponse()
        self.status, self.headers = response.status, {k.lower(): v for k, v in response.getheaders()}
        self._events: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(response,), daemon=True)
        self._thread.start()

    def _read(self, response):
        fields = {}
        try:
            while line := response.readline():
                line = line.decode().rstrip("\n")
                if line:
                    name, _, value = line.partition(":")
                    fields[name] = value.removeprefix(" ")
                elif "event" in fields:
                    number = fields.get("id")
                    self._events.put(Event(fields["event"], json.loads(fields["data"]), number and int(number)))
                    fields = {}
        except Exception:  # noqa: BLE001 - whatever reading a cut connection raises
            pass  # cut by ``close``
        finally:
            self._events.put(None)

    def next(self, timeout: float = 5, skip=("hello", "ping")) -> Event | None:
        """The next event not of a kind in ``skip``; None when the stream ended or nothing came in ``timeout``."""
        while True:
            try:
                event = self._events.get(timeout=timeout)
            except queue.Empty:
                return None
            if event is None or event.kind not in skip:
                return event

    def close(self):
        if self._connection.sock:
            with contextlib.suppress(OSError):
                self._connection.sock.shutdown(socket.SHUT_RDWR)
        self._connection.close()
        self._thread.join(5)
