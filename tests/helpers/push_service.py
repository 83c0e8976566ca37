"""A push service for the tests, on 127.0.0.1 over HTTPS with a certificate authority of its own (trustme).

It does what a browser vendor's push service and the browser do together: for each push it checks the VAPID
signature (RFC 8292) against the installation's public key, decrypts the body with http-ece and the device's own
keys (RFC 8291), and keeps what it read. It answers each device as the test says (201 until told otherwise).
Devices are made here: each has the private key and auth secret a browser would keep.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import secrets
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
import trustme
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02


def _encoded(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _decoded(value: str) -> bytes:
    return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))


@dataclasses.dataclass
class Received:
    """One push as the device read it: the device's id, the headers, the signature's claims and the content."""

    device: str
    headers: dict
    claims: dict
    vapid_key: str
    content: dict
    at: float


class PushService:
    def __init__(self, vapid_public_key: str):
        self.vapid_public_key = vapid_public_key
        self.authority = trustme.CA()
        self.received: list[Received] = []
        self.refused: list[tuple[str, str]] = []  # (device, why) for pushes a real service would refuse
        self.answers: dict[str, list[int]] = {}
        self._keys: dict[str, tuple[ec.EllipticCurvePrivateKey, bytes]] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.authority.issue_cert("127.0.0.1").configure_cert(tls)
        self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self._server.server_port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def ca_file(self, directory) -> str:
        """The authority's certificate as a PEM file in ``directory``, for ``SSL_CERT_FILE``."""
        path = os.path.join(directory, "push-service-ca.pem")
        self.authority.cert_pem.write_to_path(path)
        return path

    def device(self) -> dict:
        """A new device's subscription, as ``PushSubscription.toJSON()`` gives it in a browser."""
        key, auth = ec.generate_private_key(ec.SECP256R1()), secrets.token_bytes(16)
        name = secrets.token_hex(8)
        self._keys[name] = (key, auth)
        point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        return {"endpoint": f"{self.url}/push/{name}", "keys": {"p256dh": _encoded(point), "auth": _encoded(auth)}}

    def answer(self, endpoint: str, *statuses: int) -> None:
        """Answer the next pushes to ``endpoint``'s device with ``statuses``, then 201 again."""
        self.answers.setdefault(endpoint.rsplit("/", 1)[1], []).extend(statuses)

    def to(self, endpoint: str) -> list[Received]:
        """What ``endpoint``'s device read, in order."""
        return [push for push in self.received if push.device == endpoint.rsplit("/", 1)[1]]

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self):
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # connections kept alive, as a push service's are

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                name = self.path.rsplit("/", 1)[1]
                status = service._status(name)
                if status == 201:
                    service._read(name, dict(self.headers), body, time.time())
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        return Handler

    def _status(self, name: str) -> int:
        with self._lock:
            if name not in self._keys:
                return 404
            queued = self.answers.get(name)
            return queued.pop(0) if queued else 201

    def _read(self, name: str, headers: dict, body: bytes, at: float) -> None:
        """Check and decrypt one push as the device would; a push a real service would refuse is kept as refused."""
        authorization = headers.get("Authorization", "")
        fields = dict(part.split("=", 1) for part in authorization.removeprefix("vapid ").split(","))
        if not authorization.startswith("vapid ") or not Vapid02.verify(authorization):
            self.refused.append((name, "the VAPID signature does not verify"))
            return
        if fields["k"] != self.vapid_public_key:
            self.refused.append((name, "signed with another key"))
            return
        claims = json.loads(_decoded(fields["t"].split(".")[1]))
        if claims.get("aud") != self.url or headers.get("Content-Encoding") != "aes128gcm":
            self.refused.append((name, "signed for another service, or not aes128gcm"))
            return
        key, auth = self._keys[name]
        content = json.loads(http_ece.decrypt(body, private_key=key, auth_secret=auth, version="aes128gcm"))
        with self._lock:
            self.received.append(Received(name, headers, claims, fields["k"], content, at))


def vapid_keys() -> tuple[str, str]:
    """A new VAPID key pair as the settings take it: (public, private)."""
    key = Vapid02()
    key.generate_keys()
    public = key.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return _encoded(public), _encoded(key.private_key.private_numbers().private_value.to_bytes(32, "big"))
