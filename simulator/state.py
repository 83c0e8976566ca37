"""The simulated platform's memory: holds, runs, files, idempotency, faults and a clock.

Everything sits behind one lock, because the HTTP server answers each request in its own
thread and tests also change the state directly. Lookups answer None for an unknown id;
changes raise `HoldNotFound` or `HoldNotOpen`. Holds and runs are handed out as copies,
except by `get_hold`, so that tests can change a stored hold in place.

Paging and expiry cost the same at 100 holds as at 100,000: each status keeps its holds'
listing positions in a sorted list (`_Order`), and each env its open holds' expiries in a
heap, so a page is a bisection and a slice, and expiry looks only at what is due.
"""

import base64
import binascii
import bisect
import copy
import hashlib
import heapq
import json
import re
import threading
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from simulator import samples
from simulator.decisions import decision_problem, outcome_answer
from simulator.times import as_iso, iso

HOLD_STATUSES = ("open", "decided", "expired", "cancelled")
MAX_PAGE = 100
DEFAULT_ENV = "default"
EXPIRED_ANSWER = "Nobody decided in time."

_FAULT_KINDS = ("status", "delay", "drop")


class HoldNotFound(LookupError):
    """No hold with that id in that env."""


class HoldNotOpen(Exception):
    """The hold was decided, expired or cancelled already; `hold` is its current state."""

    def __init__(self, hold: dict) -> None:
        super().__init__(f"hold {hold['hold_id']} is {hold['status']}")
        self.hold = hold


class InvalidCursor(ValueError):
    """A paging cursor this platform did not hand out."""


def error_body(code: str, message: str) -> dict:
    """The platform's error shape: {"error": {"code": …, "message": …}}."""
    return {"error": {"code": code, "message": message}}


@dataclass(frozen=True)
class _IdempotencyRecord:
    fingerprint: str
    status: int
    body: dict


class PlatformState:
    """An in-memory AgentOS platform, shared by the HTTP server and tests."""

    def __init__(self) -> None:
        # Re-entrant, so public methods may call each other while holding it.
        self._lock = threading.RLock()
        self.reset()

    def reset(self, with_samples: bool = False) -> None:
        """Forget everything, including clock offset, faults and the request log."""
        with self._lock:
            self._holds: dict[str, dict[str, dict]] = {}
            self._runs: dict[str, dict[str, dict]] = {}
            self._files: dict[tuple[str, str, str], bytes] = {}
            self._orders: dict[str, dict[str, _Order]] = {}  # env → status → listing order
            self._expiries: dict[str, list[tuple[str, str]]] = {}  # env → heap of (expires_at, hold_id)
            self._idempotency: dict[tuple[str, str], _IdempotencyRecord] = {}
            self._faults: deque[dict] = deque()
            self._requests: list[dict] = []
            self._clock_offset = timedelta(0)
            self._next_number = 100
            self._next_generated = 1
            self._cursor_epoch = 0
            if with_samples:
                self.load_samples()

    # The clock

    def now(self) -> datetime:
        """Real UTC now, moved by `advance_clock`, so tests can make holds expire."""
        with self._lock:
            return datetime.now(UTC) + self._clock_offset

    def advance_clock(self, seconds: float) -> datetime:
        """Move the platform's clock forward (or back); answers the new now."""
        with self._lock:
            self._clock_offset += timedelta(seconds=seconds)
            return self.now()

    # Adding holds

    def load_samples(self, now: datetime | None = None) -> list[dict]:
        """Put the demo holds (h_12..h_20) into env "default"; answers them."""
        with self._lock:
            moment = now or self.now()
            holds = samples.sample_holds(moment)
            runs = {run["run_id"]: run for run in samples.sample_runs(moment)}
            files = samples.sample_files()
            for hold in holds:
                hold_files = {
                    file_id: content for (hold_id, file_id), content in files.items() if hold_id == hold["hold_id"]
                }
                self._store(DEFAULT_ENV, hold, runs[hold["run_id"]], hold_files)
            self._index(DEFAULT_ENV, holds)
            return copy.deepcopy(holds)

    def add_hold(self, env: str, partial_hold: dict) -> dict:
        """Add a hold, filling whatever `partial_hold` leaves out; answers the full hold.

        Defaults: ids `h_{n}`/`r_{n}` (n from 100), agent "llamaindex-support", status
        "open", all three actions, one refund item, created now, expiring in an hour
        (`"expires_at": None` means never). Two extra keys are accepted and not kept in
        the hold: `customer_message` (the run's input) and, on a file, `content_base64`
        (its bytes; a file without them answers 404 when downloaded).
        """
        if not isinstance(partial_hold, dict):
            raise ValueError("a hold must be a JSON object")
        with self._lock:
            partial = copy.deepcopy(partial_hold)
            message = partial.pop("customer_message", None)
            files = _take_file_contents(partial.get("files") or [])
            hold = self._with_defaults(env, partial)
            _check_hold(hold)
            for item in hold["items"]:
                item.setdefault("title", item["id"])
            if hold["hold_id"] in self._holds.get(env, {}):
                raise ValueError(f"hold {hold['hold_id']} already exists in env {env!r}")
            self._store(env, hold, samples.run_for(hold, message), files)
            self._index(env, [hold])
            return copy.deepcopy(hold)

    def generate(self, env: str, count: int, related_every: int = 0) -> list[dict]:
        """Add `count` generated holds (`h_g{n}`, distinct across calls), two in every `related_every` asking about
        the same order (0: none); answers them."""
        with self._lock:
            holds = samples.generated_holds(count, self.now(), self._next_generated, related_every)
            self._next_generated += count
            for hold in holds:
                self._store(env, hold, samples.run_for(hold), {})
            self._index(env, holds)
            return copy.deepcopy(holds)

    # Reading

    def list_open(
        self, env: str, limit: int = 50, cursor: str | None = None, status: str = "open"
    ) -> tuple[list[dict], str | None]:
        """One page of holds with `status`, oldest first; answers (holds, next_cursor).

        The cursor names the last hold handed out, so holds added between pages neither
        shift nor repeat the following pages. Raises InvalidCursor for a foreign cursor.
        """
        limit = min(max(limit, 1), MAX_PAGE)
        with self._lock:
            after = _decode_cursor(cursor, self._cursor_epoch) if cursor else None
            self._expire_due(env)
            order = self._orders.get(env, {}).get(status)
            if order is None:
                return [], None
            hold_ids, more = order.page(after, limit)
            page = [self._holds[env][hold_id] for hold_id in hold_ids]
            next_cursor = _encode_cursor(page[-1], self._cursor_epoch) if more else None
            return copy.deepcopy(page), next_cursor

    def forget_cursors(self) -> None:
        """Refuse every cursor handed out so far, as a platform may that no longer accepts old ones."""
        with self._lock:
            self._cursor_epoch += 1

    def count_holds(self, env: str, status: str | None = None) -> int:
        """How many holds `env` has, of one status or of any."""
        with self._lock:
            self._expire_due(env)
            orders = self._orders.get(env, {})
            if status is None:
                return sum(len(order) for order in orders.values())
            return len(orders[status]) if status in orders else 0

    def get_hold(self, env: str, hold_id: str) -> dict | None:
        """The hold in any status, or None.

        This is the stored dict itself, not a copy: a test changes it in place to stage
        an agent that changed its ask. Its ids, status and times must not be changed so:
        the listing order and the expiry heap are keyed by them.
        """
        with self._lock:
            self._expire_due(env)
            return self._holds.get(env, {}).get(hold_id)

    def get_run(self, env: str, run_id: str) -> dict | None:
        """The run, or None."""
        with self._lock:
            self._expire_due(env)
            return copy.deepcopy(self._runs.get(env, {}).get(run_id))

    def get_file(self, env: str, hold_id: str, file_id: str) -> tuple[str, bytes] | None:
        """(content type, bytes) of a file attached to a hold, or None."""
        with self._lock:
            hold = self._holds.get(env, {}).get(hold_id)
            content = self._files.get((env, hold_id, file_id))
            if hold is None or content is None:
                return None
            described = next(file for file in hold["files"] if file["id"] == file_id)
            return described["content_type"], content

    # Deciding and other ends of a hold

    def decide(self, env: str, hold_id: str, body: object, idempotency_key: str) -> tuple[int, dict]:
        """Apply a decision as `POST …/decision` does; answers (HTTP status, JSON body).

        The first answer for a key is kept with a fingerprint of the request; the same
        request again replays it without deciding anything, a different one is refused.
        """
        fingerprint = _fingerprint(hold_id, body)
        with self._lock:
            record = self._idempotency.get((env, idempotency_key))
            if record is not None:
                if record.fingerprint != fingerprint:
                    return 422, error_body(
                        "idempotency_key_reused",
                        "this Idempotency-Key was already used for a different request",
                    )
                return record.status, copy.deepcopy(record.body)
            status, answer = self._decide_once(env, hold_id, body)
            self._idempotency[(env, idempotency_key)] = _IdempotencyRecord(fingerprint, status, copy.deepcopy(answer))
            return status, answer

    def decide_elsewhere(self, env: str, hold_id: str, decided_by: str) -> dict:
        """Approve every item, as if someone decided in another tool; answers the hold."""
        with self._lock:
            hold = self._open_hold(env, hold_id)
            entries = [{"id": item["id"], "action": "approve"} for item in hold["items"]]
            self._apply_decision(env, hold, entries, decided_by)
            return copy.deepcopy(hold)

    def cancel(self, env: str, hold_id: str) -> dict:
        """End the hold because its run was cancelled; answers the hold."""
        with self._lock:
            hold = self._open_hold(env, hold_id)
            self._close(env, [hold], "cancelled")
            self._finish_run(env, hold, "failed", None)
            return copy.deepcopy(hold)

    def expire(self, env: str, hold_id: str) -> dict:
        """Expire the hold now, whatever its expiry said; answers the hold."""
        with self._lock:
            hold = self._open_hold(env, hold_id)
            hold["expires_at"] = iso(self.now())
            self._close_as_expired(env, [hold])
            return copy.deepcopy(hold)

    # Faults

    def push_faults(self, faults: list[dict]) -> int:
        """Queue faults for the next API requests; answers how many are pending.

        A fault is a dict with any of `status` (answer that error), `delay` (seconds to
        wait first) and `drop` (close the connection unanswered), and optionally
        `path_contains`, so it only hits a request whose path contains that text.
        """
        checked = [_checked_fault(fault) for fault in faults]
        with self._lock:
            self._faults.extend(checked)
            return len(self._faults)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def next_fault(self, path: str = "") -> dict | None:
        """Take the first queued fault that applies to `path`, or None."""
        with self._lock:
            for fault in self._faults:
                if fault.get("path_contains", "") in path:
                    self._faults.remove(fault)
                    return dict(fault)
            return None

    # The request log

    def record_request(self, entry: dict) -> None:
        with self._lock:
            self._requests.append(copy.deepcopy(entry))

    @property
    def requests(self) -> list[dict]:
        """Every API request seen since the last reset or clear, oldest first."""
        with self._lock:
            return copy.deepcopy(self._requests)

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    # Internals; callers hold the lock.

    def _store(self, env: str, hold: dict, run: dict, files: dict[str, bytes]) -> None:
        """Keep the hold (replacing one with its id, as reloading the samples does); `_index` it after."""
        replaced = self._holds.setdefault(env, {}).get(hold["hold_id"])
        if replaced is not None:
            self._orders[env][replaced["status"]].remove([_entry(replaced)])
        self._holds[env][hold["hold_id"]] = hold
        self._runs.setdefault(env, {})[run["run_id"]] = run
        for file_id, content in files.items():
            self._files[(env, hold["hold_id"], file_id)] = content

    def _index(self, env: str, holds: list[dict]) -> None:
        """Put stored holds into their status's listing order, and open ones into the expiry heap."""
        orders = self._orders.setdefault(env, {})
        for status in {hold["status"] for hold in holds}:
            orders.setdefault(status, _Order()).add([_entry(hold) for hold in holds if hold["status"] == status])
        expiries = self._expiries.setdefault(env, [])
        for hold in holds:
            if hold["status"] == "open" and hold["expires_at"]:
                heapq.heappush(expiries, (hold["expires_at"], hold["hold_id"]))

    def _close(self, env: str, holds: list[dict], status: str) -> None:
        """Move open holds to `status`, in the listing orders too.

        A closed hold's expiry stays in the heap until it comes due, and is then skipped.
        """
        entries = [_entry(hold) for hold in holds]
        orders = self._orders[env]
        orders["open"].remove(entries)
        orders.setdefault(status, _Order()).add(entries)
        for hold in holds:
            hold["status"] = status

    def _with_defaults(self, env: str, partial: dict) -> dict:
        number = self._take_number(env)
        order_id = f"A-{number}"
        now = self.now()
        hold = {
            "hold_id": f"h_{number}",
            "run_id": f"r_{number}",
            "agent": "llamaindex-support",
            "capability": "support",
            "status": "open",
            "question": "Approve this request?",
            "intent": None,
            "details": None,
            "actions": list(samples.ALL_ACTIONS),
            "items": [
                {
                    "id": order_id,
                    "title": f"{order_id} · 10.00",
                    "data": {"order_id": order_id, "amount": "10.00"},
                }
            ],
            "files": [],
            "created_at": now,
            "expires_at": now + timedelta(hours=1),
            "decision": None,
        }
        hold.update(partial)
        try:
            hold["created_at"] = as_iso(hold["created_at"])
            if hold["expires_at"] is not None:
                hold["expires_at"] = as_iso(hold["expires_at"])
        except (TypeError, ValueError) as error:
            raise ValueError("created_at and expires_at must be ISO-8601 times") from error
        return hold

    def _take_number(self, env: str) -> int:
        """The next free n for `h_{n}`; skips ids the env already has."""
        taken = self._holds.get(env, {})
        while f"h_{self._next_number}" in taken:
            self._next_number += 1
        number = self._next_number
        self._next_number += 1
        return number

    def _open_hold(self, env: str, hold_id: str) -> dict:
        """The stored (not copied) hold, which must still be open."""
        hold = self._holds.get(env, {}).get(hold_id)
        if hold is None:
            raise HoldNotFound(hold_id)
        self._expire_if_due(env, hold)
        if hold["status"] != "open":
            raise HoldNotOpen(copy.deepcopy(hold))
        return hold

    def _decide_once(self, env: str, hold_id: str, body: object) -> tuple[int, dict]:
        try:
            hold = self._open_hold(env, hold_id)
        except HoldNotFound:
            return 404, error_body("hold_not_found", f"no hold {hold_id} in env {env}")
        except HoldNotOpen as not_open:
            answer = error_body("hold_not_open", str(not_open))
            return 409, answer | {"hold": not_open.hold}
        problem = decision_problem(hold, body)
        if problem:
            return 422, error_body("invalid_decision", problem)
        assert isinstance(body, dict)
        self._apply_decision(env, hold, body["items"], body.get("decided_by"))
        return 200, copy.deepcopy(hold)

    def _apply_decision(self, env: str, hold: dict, entries: list[dict], decided_by: str | None) -> None:
        self._close(env, [hold], "decided")
        hold["decision"] = {
            "items": copy.deepcopy(entries),
            "decided_by": decided_by,
            "decided_at": iso(self.now()),
        }
        self._finish_run(env, hold, "completed", {"answer": outcome_answer(hold, entries)})

    def _expire_due(self, env: str) -> None:
        """Lazy expiry: an open hold past its expiry is expired when next looked at."""
        now = iso(self.now())
        expiries = self._expiries.get(env, [])
        holds = self._holds.get(env, {})
        due = []
        while expiries and expiries[0][0] <= now:
            expires_at, hold_id = heapq.heappop(expiries)
            hold = holds.get(hold_id)
            # Skip what ended otherwise, or was replaced by a hold with its id (it has its own entry).
            if hold is not None and hold["status"] == "open" and hold["expires_at"] == expires_at:
                due.append(hold)
        if due:
            self._close_as_expired(env, due)

    def _expire_if_due(self, env: str, hold: dict) -> None:
        # Stored times share one fixed-width format, so comparing the text compares the times.
        expires_at = hold["expires_at"]
        if hold["status"] == "open" and expires_at and expires_at <= iso(self.now()):
            self._close_as_expired(env, [hold])

    def _close_as_expired(self, env: str, holds: list[dict]) -> None:
        self._close(env, holds, "expired")
        for hold in holds:
            self._finish_run(env, hold, "completed", {"answer": EXPIRED_ANSWER})

    def _finish_run(self, env: str, hold: dict, status: str, output: dict | None) -> None:
        run = self._runs.get(env, {}).get(hold["run_id"])
        if run is not None:
            run["status"] = status
            run["output"] = output


_Entry = tuple[tuple[str, tuple[str | int, ...]], str]


class _Order:
    """The holds of one env and status as (position, hold id), sorted: the order pages list them in."""

    # list.pop and insort shift pointers in C, cheap one at a time even at 100,000 holds; past this
    # many holds at once, one filtering pass (or one sort) over the list is cheaper.
    _ONE_BY_ONE = 100

    def __init__(self) -> None:
        self._entries: list[_Entry] = []

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, entries: list[_Entry]) -> None:
        if len(entries) <= self._ONE_BY_ONE:
            for entry in entries:
                bisect.insort(self._entries, entry)
        else:
            # Timsort merges the already sorted runs in linear time.
            self._entries.extend(entries)
            self._entries.sort()

    def remove(self, entries: list[_Entry]) -> None:
        if len(entries) <= self._ONE_BY_ONE:
            for entry in entries:
                del self._entries[bisect.bisect_left(self._entries, entry)]
        else:
            gone = set(entries)
            self._entries = [entry for entry in self._entries if entry not in gone]

    def page(self, after: _Entry | None, limit: int) -> tuple[list[str], bool]:
        """The ids of up to `limit` holds listed after `after`; and whether more follow."""
        start = bisect.bisect_right(self._entries, after) if after else 0
        return [hold_id for _, hold_id in self._entries[start : start + limit]], start + limit < len(self._entries)


def _entry(hold: dict) -> _Entry:
    return _position(hold["created_at"], hold["hold_id"])


def _position(created_at: str, hold_id: str) -> _Entry:
    """Where a hold sorts: by creation (times share one format, so text sorts), then id.

    Numbers in ids compare as numbers, so h_999 comes before h_1000 made in the same second;
    the id itself settles ids that read as the same numbers (h_07, h_7).
    """
    parts = re.split(r"(\d+)", hold_id)
    return (created_at, tuple(int(part) if index % 2 else part for index, part in enumerate(parts))), hold_id


def _encode_cursor(hold: dict, epoch: int) -> str:
    """The position after ``hold``; a cursor of an earlier epoch (see ``forget_cursors``) is refused."""
    position = [hold["created_at"], hold["hold_id"]] + ([epoch] if epoch else [])
    raw = json.dumps(position, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str, epoch: int) -> _Entry:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        position = json.loads(raw)
    except (binascii.Error, ValueError) as error:
        raise InvalidCursor(f"invalid cursor {cursor!r}") from error
    if not (isinstance(position, list) and len(position) in (2, 3) and all(isinstance(p, str) for p in position[:2])):
        raise InvalidCursor(f"invalid cursor {cursor!r}")
    if (position[2] if len(position) == 3 else 0) != epoch:
        raise InvalidCursor(f"cursor {cursor!r} is no longer accepted")
    return _position(position[0], position[1])


def _fingerprint(hold_id: str, body: object) -> str:
    """Same hold and same JSON (whatever the key order) give the same fingerprint."""
    canonical = json.dumps([hold_id, body], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _take_file_contents(files: list) -> dict[str, bytes]:
    """Pop `content_base64` off partial file entries; answers the bytes by file id."""
    contents = {}
    for file in files:
        if not isinstance(file, dict) or not isinstance(file.get("id"), str):
            raise ValueError("each file must be an object with a string id")
        encoded = file.pop("content_base64", None)
        if encoded is not None:
            try:
                contents[file["id"]] = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError) as error:
                raise ValueError(f"file {file['id']}: content_base64 is not base64") from error
            file.setdefault("size", len(contents[file["id"]]))
        file.setdefault("name", file["id"])
        file.setdefault("content_type", "application/octet-stream")
        file.setdefault("size", 0)
    return contents


def _check_hold(hold: dict) -> None:
    """Refuse a hold the platform could never have made."""
    if hold["status"] not in HOLD_STATUSES:
        raise ValueError(f"status must be one of {', '.join(HOLD_STATUSES)}")
    actions = hold["actions"]
    if not (isinstance(actions, list) and actions and all(action in samples.ALL_ACTIONS for action in actions)):
        raise ValueError("actions must be a non-empty list of approve, edit, reject")
    items = hold["items"]
    if not (isinstance(items, list) and items):
        raise ValueError("items must be a non-empty list")
    for item in items:
        if not (isinstance(item, dict) and isinstance(item.get("id"), str) and isinstance(item.get("data"), dict)):
            raise ValueError("each item must be an object with a string id and object data")
    ids = [item["id"] for item in items]
    if len(set(ids)) != len(ids):
        raise ValueError("item ids must be distinct")


def _checked_fault(fault: object) -> dict:
    """A copy of `fault`, refused unless the server knows how to act it out."""
    if not isinstance(fault, dict) or not any(kind in fault for kind in _FAULT_KINDS):
        raise ValueError("a fault needs status, delay or drop")
    status = fault.get("status")
    if status is not None and (isinstance(status, bool) or not isinstance(status, int) or not 400 <= status <= 599):
        raise ValueError("a fault's status must be an HTTP error status, 400 to 599")
    delay = fault.get("delay")
    if delay is not None and (isinstance(delay, bool) or not isinstance(delay, int | float) or not 0 <= delay <= 60):
        raise ValueError("a fault's delay must be 0 to 60 seconds")
    if not isinstance(fault.get("drop", False), bool):
        raise ValueError("a fault's drop must be true or false")
    if not isinstance(fault.get("path_contains", ""), str):
        raise ValueError("a fault's path_contains must be a string")
    return dict(fault)
