"""Talking to the simulated platform in its own tests: its key, what its times look like, and its requests."""

import re
import struct
import zlib

import httpx

from simulator.state import PlatformState

API_KEY = "simulator-test-key"
# Plain HTTP on 127.0.0.1: not loading CA certificates that no request uses saves time on every client.
NO_TLS = {"verify": False}
ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def decide(api: httpx.Client, hold_id: str, body: object, key: str = "key-1") -> httpx.Response:
    return api.post(f"/holds/{hold_id}/decision", json=body, headers={"Idempotency-Key": key})


def approve_all(hold: dict) -> dict:
    return {"items": [{"id": item["id"], "action": "approve"} for item in hold["items"]]}


def all_open_ids(api: httpx.Client, limit: int = 2) -> list[str]:
    ids, cursor = [], None
    while True:
        params = {"limit": limit} | ({"cursor": cursor} if cursor else {})
        page = api.get("/holds", params=params).json()
        ids += [hold["hold_id"] for hold in page["holds"]]
        cursor = page["next_cursor"]
        if cursor is None:
            return ids


def page_ids(platform: PlatformState, status: str = "open", limit: int = 3) -> list[str]:
    ids, cursor = [], None
    while True:
        holds, cursor = platform.list_open("default", limit=limit, cursor=cursor, status=status)
        ids += [hold["hold_id"] for hold in holds]
        if cursor is None:
            return ids


def assert_valid_png(content: bytes) -> None:
    """Signature, then chunks whose CRCs hold, IHDR first and IEND last, and pixels that inflate."""
    assert content[:8] == b"\x89PNG\r\n\x1a\n"
    position, kinds, pixels = 8, [], b""
    while position < len(content):
        (length,) = struct.unpack(">I", content[position : position + 4])
        kind, data = content[position + 4 : position + 8], content[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", content[position + 8 + length : position + 12 + length])
        assert zlib.crc32(kind + data) == crc
        kinds.append(kind)
        pixels += data if kind == b"IDAT" else b""
        position += 12 + length
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND"
    width, height = struct.unpack(">II", content[16:24])
    assert len(zlib.decompress(pixels)) == height * (1 + 3 * width)
