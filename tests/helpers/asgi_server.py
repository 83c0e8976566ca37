"""The app served as production serves it, by uvicorn through ``reviewqueue.asgi``, for the tests that browse it.

It stands in for pytest-django's ``live_server`` (a threaded WSGI server): the same attributes, a thread of this
process on 127.0.0.1 at a free port, the test database's settings, and the static files served from the apps'
folders as ``runserver`` would. Under it every page and the pages' event streams (``/events/``) are served.
"""

from __future__ import annotations

import socket
import threading

import uvicorn
from asgiref.sync import SyncToAsync
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.db import connections
from django.test.utils import modify_settings

import reviewqueue.asgi

HOST = "127.0.0.1"


class AsgiLiveServer:
    def __init__(self):
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((HOST, 0))
        self.port = self._socket.getsockname()[1]
        config = uvicorn.Config(
            ASGIStaticFilesHandler(reviewqueue.asgi.application),
            log_level="warning",
            lifespan="off",
            # Streams still open when the suite ends (a page left on a hold) are cut after this: they never end alone.
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        # As reviewqueue/asgi.py has it: each request's thread opens its connection and closes it at the end.
        for alias in connections:
            connections.settings[alias]["CONN_MAX_AGE"] = 0
        # ``_live_server_helper`` (pytest-django) enables these for each test that uses the server.
        self._live_server_modified_settings = modify_settings(ALLOWED_HOSTS={"append": HOST})
        self._thread = threading.Thread(target=self._serve, name="uvicorn", daemon=True)
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("uvicorn did not start: see its output above")
            self._thread.join(0.02)

    def _serve(self):
        try:
            self._server.run(sockets=[self._socket])
        finally:
            connections.close_all()  # the server's connections to the test database, which teardown drops

    def stop(self):
        self._server.should_exit = True
        self._thread.join(10)
        # The synchronous views ran in asgiref's one thread for them: its connections, too, must go.
        SyncToAsync.single_thread_executor.submit(connections.close_all).result()

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def __str__(self) -> str:
        return self.url

    def __add__(self, other: str) -> str:
        return f"{self}{other}"
