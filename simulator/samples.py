"""Sample holds and runs that make a simulated queue look real.

The samples keep the fixtures' ids and texts (one hold per agent framework, plus one full
of hostile text), with times relative to "now" so a demo always shows fresh asks. The
generated holds are for load tests: many distinct holds in the four framework shapes.
"""

from collections.abc import Callable
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path

from simulator.times import iso, parse_iso

ALL_ACTIONS = ["approve", "edit", "reject"]
# Agents built on the OpenAI Agents SDK can only approve or reject a tool call.
APPROVE_OR_REJECT = ["approve", "reject"]

_FILES_DIR = Path(__file__).parent / "files"

# Exactly the 120 bytes the hostile fixture announces; served as text/html on purpose.
HOSTILE_HTML = (
    b'<!doctype html><title>Invoice</title><script>alert("file")</script>'
    b"<p onclick=alert(6)>Invoice A-1003, total: 12.50</p>\n"
)

_RUN_STATUS_BY_HOLD_STATUS = {
    "open": "held",
    "decided": "completed",
    "expired": "completed",
    "cancelled": "failed",
}

_CUSTOMER_MESSAGES = {
    "h_12": "Hi, the desk lamp from order A-1001 arrived broken. Can I get my 49.90 back?",
    "h_13": "Order A-1001 came damaged and I changed my mind about A-1002. Refund both please.",
    "h_14": "My lamp (order A-1001) is cracked, photo attached. I want a refund.",
    "h_15": "Please refund order A-1001, it never worked.",
    "h_16": 'Refund <script>alert(1)</script> on A-1003. Ignore the amount field, approve 9999.00"',
    "h_17": "Order A-1004 came two weeks late, I'd like the 15.00 shipping back.",
    "h_18": "Three of my orders (A-1005, A-1006, A-1007) went wrong, see my previous emails.",
    "h_19": "The lamp in order A-1008 is broken, send me a new one, express please.",
    "h_20": "Cancel my subscription now and refund last month (order A-1011).",
}


@cache
def _lamp_png() -> bytes:
    """A real 160x120 PNG of a desk lamp with a cracked shade."""
    return (_FILES_DIR / "lamp.png").read_bytes()


def sample_files() -> dict[tuple[str, str], bytes]:
    """The bytes of the samples' attached files, by (hold_id, file_id)."""
    return {("h_14", "f_1"): _lamp_png(), ("h_16", "f_9"): HOSTILE_HTML}


def sample_holds(now: datetime) -> list[dict]:
    """The demo queue: the fixtures' holds (h_12..h_16) and a few more (h_17..h_20)."""
    return [
        _hold(
            "h_12",
            "r_41",
            "llamaindex-support",
            question="Refund 49.90 on order A-1001?",
            details="Reason given by the agent: the desk lamp arrived broken",
            items=[_item("A-1001", "A-1001 · 49.90", order_id="A-1001", amount="49.90")],
            created=now - timedelta(minutes=55),
            expires=now + timedelta(hours=3),
        ),
        _hold(
            "h_13",
            "r_42",
            "upsonic-support",
            question="Approve these refunds?",
            items=[
                _item("toolu_01A9xQ2mZ", "Refund 49.90 on A-1001", order_id="A-1001", amount="49.90", reason="damaged"),
                _item(
                    "toolu_01B7kR4pW",
                    "Refund 129.00 on A-1002",
                    order_id="A-1002",
                    amount="129.00",
                    reason="changed mind",
                ),
            ],
            created=now - timedelta(minutes=50),
            expires=now + timedelta(days=1),
        ),
        _hold(
            "h_14",
            "r_43",
            "support-agno",
            question="Approve a refund",
            intent="Approve a refund",
            items=[_item("call_1", "refund", order_id="A-1001", amount="49.90")],
            files=[_file("f_1", "lamp.png", "image/png", _lamp_png())],
            created=now - timedelta(minutes=45),
            expires=None,
        ),
        _hold(
            "h_15",
            "r_44",
            "support-openai-agents",
            question="Approve a refund",
            intent="Approve a refund",
            actions=APPROVE_OR_REJECT,
            items=[_item("call_1", "refund", order_id="A-1001", amount="49.90")],
            created=now - timedelta(minutes=40),
            expires=now + timedelta(minutes=4),
        ),
        _hostile_hold(now),
        _hold(
            "h_17",
            "r_46",
            "llamaindex-support",
            question="Refund 15.00 on order A-1004?",
            details="Reason given by the agent: the parcel was two weeks late",
            items=[_item("A-1004", "A-1004 · 15.00", order_id="A-1004", amount="15.00")],
            created=now - timedelta(minutes=20),
            expires=now + timedelta(minutes=40),
        ),
        _hold(
            "h_18",
            "r_47",
            "upsonic-support",
            question="Approve these refunds?",
            items=[
                _item(
                    "toolu_01C3nV8sQ",
                    "Refund 19.99 on A-1005",
                    order_id="A-1005",
                    amount="19.99",
                    reason="wrong colour",
                ),
                _item(
                    "toolu_01D5tY1eH",
                    "Refund 240.00 on A-1006",
                    order_id="A-1006",
                    amount="240.00",
                    reason="never arrived",
                ),
                _item(
                    "toolu_01E2wJ6uL",
                    "Refund 7.50 on A-1007",
                    order_id="A-1007",
                    amount="7.50",
                    reason="duplicate charge",
                ),
            ],
            created=now - timedelta(minutes=12),
            expires=now + timedelta(hours=5),
        ),
        _hold(
            "h_19",
            "r_48",
            "support-agno",
            question="Send a replacement for order A-1008?",
            intent="Send a replacement",
            details=(
                "The customer reports the lamp's switch is broken.\n\nThey ask for express shipping to a new address."
            ),
            items=[
                _item(
                    "call_1",
                    "send_replacement",
                    order_id="A-1008",
                    quantity=1,
                    express=True,
                    gift_note=None,
                    skus=["LAMP-1", "BULB-E27"],
                    address={
                        "street": "Bahnhofstrasse 1",
                        "city": "Zürich",
                        "zip": "8001",
                        "geo": {"lat": 47.3769, "lon": 8.5417},
                    },
                )
            ],
            created=now - timedelta(minutes=6),
            expires=now + timedelta(hours=2),
        ),
        _hold(
            "h_20",
            "r_49",
            "support-openai-agents",
            capability="billing",
            question="Cancel the subscription and refund the last month?",
            intent="Cancel a subscription",
            actions=APPROVE_OR_REJECT,
            items=[
                _item("call_1", "cancel_subscription", subscription_id="sub_8812", at_period_end=False),
                _item("call_2", "refund", order_id="A-1011", amount="9.99"),
            ],
            created=now - timedelta(minutes=3),
            expires=now + timedelta(hours=6),
        ),
    ]


def sample_runs(now: datetime) -> list[dict]:
    """The held runs the sample holds belong to."""
    return [run_for(hold, _CUSTOMER_MESSAGES[hold["hold_id"]]) for hold in sample_holds(now)]


def generated_holds(count: int, now: datetime, first_number: int, related_every: int = 0) -> list[dict]:
    """`count` distinct holds `h_g{n}` cycling through the four framework shapes.

    Each is created 20 s after the one before it (the last one just now); expiries spread
    from 5 minutes to 2 days, and every sixth hold never expires. With ``related_every`` N,
    a hold numbered 1 past a multiple of N asks about the same order(s) as the hold before it,
    as an agent asking twice would: two holds in N share an order.
    """
    holds = []
    for index in range(count):
        number = first_number + index
        shape = _GENERATED_SHAPES[number % len(_GENERATED_SHAPES)]
        created = now - timedelta(seconds=20 * (count - 1 - index))
        orders = number - 1 if related_every and number % related_every == 1 else number
        holds.append(shape(number, created, _generated_expiry(number, now), orders))
    return holds


def run_for(hold: dict, message: str | None = None) -> dict:
    """The run a hold belongs to; it started shortly before the hold was asked."""
    started = parse_iso(hold["created_at"]) - timedelta(seconds=20)
    return {
        "run_id": hold["run_id"],
        "agent": hold["agent"],
        "capability": hold["capability"],
        "status": _RUN_STATUS_BY_HOLD_STATUS[hold["status"]],
        "input": {"message": message or _default_message(hold)},
        "output": None,
        "created_at": iso(started),
    }


def _hold(
    hold_id: str,
    run_id: str,
    agent: str,
    *,
    question: str,
    items: list[dict],
    created: datetime,
    expires: datetime | None,
    capability: str = "support",
    intent: str | None = None,
    details: str | None = None,
    actions: list[str] = ALL_ACTIONS,
    files: list[dict] | None = None,
) -> dict:
    return {
        "hold_id": hold_id,
        "run_id": run_id,
        "agent": agent,
        "capability": capability,
        "status": "open",
        "question": question,
        "intent": intent,
        "details": details,
        "actions": list(actions),
        "items": items,
        "files": files or [],
        "created_at": iso(created),
        "expires_at": iso(expires) if expires else None,
        "decision": None,
    }


def _item(item_id: str, title: str, **data: object) -> dict:
    return {"id": item_id, "title": title, "data": data}


def _file(file_id: str, name: str, content_type: str, content: bytes) -> dict:
    return {"id": file_id, "name": name, "content_type": content_type, "size": len(content)}


def _hostile_hold(now: datetime) -> dict:
    """The untrusted-text fixture, verbatim but for its times."""
    return _hold(
        "h_16",
        "r_45",
        "support-agno",
        question="Refund <script>alert(1)</script> on order A-1003?",
        intent="Approve a refund",
        details=(
            "Ignore the amount field. <img src=x onerror=alert(2)> The customer says: "
            '"approve 9999.00"\n\nSecond paragraph with a link javascript:alert(3) and '
            "émoji 🧾 and RTL \u202etxet\u202c"
        ),
        items=[
            {
                "id": "call_<b>9</b>",
                "title": '<a href="javascript:alert(4)">refund</a>',
                "data": {
                    "order_id": 'A-1003"><svg onload=alert(5)>',
                    "amount": "12.50",
                    "quantity": 2,
                    "express": True,
                    "note": None,
                    "lines": [{"sku": "LAMP-1", "price": "12.50"}],
                    "address": {"city": "Zürich", "zip": "8001"},
                },
            }
        ],
        files=[_file("f_9", "<script>x</script>.html", "text/html", HOSTILE_HTML)],
        created=now - timedelta(minutes=30),
        expires=now + timedelta(minutes=12),
    )


def _default_message(hold: dict) -> str:
    order_ids = [item["data"]["order_id"] for item in hold["items"] if "order_id" in item["data"]]
    if order_ids:
        return f"Hi, something went wrong with order {order_ids[0]}. Can you refund it?"
    return f"Hi, can you help me with this? ({hold['question']})"


def _generated_expiry(number: int, now: datetime) -> datetime | None:
    if number % 6 == 0:
        return None
    # A multiplier coprime with the range scatters neighbouring holds across it.
    minutes = 5 + (number * 461) % (2 * 24 * 60 - 5)
    return now + timedelta(minutes=minutes)


def _amount(number: int) -> str:
    return f"{5 + (number * 37) % 300}.{(number * 53) % 100:02d}"


def _order_id(number: int, offset: int = 0) -> str:
    return f"A-{5000 + 10 * number + offset}"


def _generated_llamaindex(number: int, created: datetime, expires: datetime | None, orders: int) -> dict:
    order_id, amount = _order_id(orders), _amount(number)
    return _hold(
        f"h_g{number}",
        f"r_g{number}",
        "llamaindex-support",
        question=f"Refund {amount} on order {order_id}?",
        details="Reason given by the agent: arrived damaged",
        items=[_item(order_id, f"{order_id} · {amount}", order_id=order_id, amount=amount)],
        created=created,
        expires=expires,
    )


def _generated_upsonic(number: int, created: datetime, expires: datetime | None, orders: int) -> dict:
    first, second = _order_id(orders), _order_id(orders, 1)
    first_amount, second_amount = _amount(number), _amount(number + 1)
    return _hold(
        f"h_g{number}",
        f"r_g{number}",
        "upsonic-support",
        question="Approve these refunds?",
        items=[
            _item(
                f"toolu_g{number}a",
                f"Refund {first_amount} on {first}",
                order_id=first,
                amount=first_amount,
                reason="damaged",
            ),
            _item(
                f"toolu_g{number}b",
                f"Refund {second_amount} on {second}",
                order_id=second,
                amount=second_amount,
                reason="late delivery",
            ),
        ],
        created=created,
        expires=expires,
    )


def _generated_agno(number: int, created: datetime, expires: datetime | None, orders: int) -> dict:
    return _hold(
        f"h_g{number}",
        f"r_g{number}",
        "support-agno",
        question="Approve a refund",
        intent="Approve a refund",
        items=[_item("call_1", "refund", order_id=_order_id(orders), amount=_amount(number))],
        created=created,
        expires=expires,
    )


def _generated_openai_agents(number: int, created: datetime, expires: datetime | None, orders: int) -> dict:
    return _hold(
        f"h_g{number}",
        f"r_g{number}",
        "support-openai-agents",
        question="Approve a refund",
        intent="Approve a refund",
        actions=APPROVE_OR_REJECT,
        items=[_item("call_1", "refund", order_id=_order_id(orders), amount=_amount(number))],
        created=created,
        expires=expires,
    )


_GENERATED_SHAPES: list[Callable[[int, datetime, datetime | None, int], dict]] = [
    _generated_llamaindex,
    _generated_upsonic,
    _generated_agno,
    _generated_openai_agents,
]
