"""One hostile hold among a hundred good ones: the hundred arrive, and the hostile one is stored or quarantined."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from holds.mirror import mirrored, sync, writing
from holds.models import Hold, QuarantinedHold, SyncState
from simulator.state import PlatformState

pytestmark = pytest.mark.django_db

GOOD_HOLDS = 100


class PlatformSendingHostileHolds(PlatformState):
    """The simulator, listing some holds changed on the way out as a hostile agent or a faulty platform would send them.

    The simulator sorts and expires holds by their stored fields, so a hold whose id
    or times are not even text cannot be stored in it: it is stored sane, and
    listed changed.
    """

    def __init__(self):
        super().__init__()
        self.sent_as = {}  # hold id → function from the stored hold to what the listing sends

    def list_open(self, env, limit=50, cursor=None, status="open"):
        page, next_cursor = super().list_open(env, limit, cursor, status)
        return [self.sent_as.get(hold["hold_id"], _unchanged)(hold) for hold in page], next_cursor


def _unchanged(hold):
    return hold


@pytest.fixture
def platform_state():
    return PlatformSendingHostileHolds()


def hundred_holds_around(platform_state, change) -> str:
    """List 100 good holds with one hostile hold in the middle of the first page; answers its stored id."""
    start = platform_state.now() - timedelta(hours=1)
    ids = [
        platform_state.add_hold("default", {"created_at": start + timedelta(seconds=second)})["hold_id"]
        for second in range(GOOD_HOLDS + 1)
    ]
    hostile = ids[GOOD_HOLDS // 2]
    platform_state.sent_as[hostile] = change
    return hostile


def fields(**changes):
    return lambda hold: hold | changes


def without(key):
    return lambda hold: {name: value for name, value in hold.items() if name != key}


def item(**changes):
    return lambda hold: hold | {"items": [hold["items"][0] | changes]}


def second_item_like_the_first():
    return lambda hold: hold | {"items": hold["items"] * 2}


def file(**changes):
    return lambda hold: (
        hold | {"files": [{"id": "f_1", "name": "photo.jpg", "content_type": "image/jpeg", "size": 3} | changes]}
    )


def nested(depth: int, leaf="deep"):
    value = leaf
    for _ in range(depth):
        value = {"level": value}
    return value


def instead(value):
    return lambda hold: value


def stored(**expected):
    """The hostile hold is mirrored, with these values."""

    def check(hold_id):
        hold = Hold.objects.get(env="default", hold_id=hold_id)
        item = hold.items.first()
        seen = {
            name: getattr(hold, name) if hasattr(hold, name) else getattr(item, name.removeprefix("item_"))
            for name in expected
        }
        assert seen == expected
        assert not QuarantinedHold.objects.exists()

    return check


def quarantined(reason: str, hold_id=None):
    """The hostile hold is in quarantine, saying why; nothing of it is mirrored."""

    def check(stored_id):
        row = QuarantinedHold.objects.get()
        assert reason in row.reason
        assert row.hold_id == (stored_id if hold_id is None else hold_id)
        assert row.excerpt and row.times_seen == 1
        assert not Hold.objects.filter(hold_id=stored_id).exists()

    return check


HOSTILE = [
    # hold_id
    pytest.param(
        fields(hold_id="h_" + "7" * 5000),
        quarantined("hold_id is 5,002 characters long", "h_" + "7" * 1997 + "…"),
        id="hold_id too long",
    ),
    pytest.param(fields(hold_id=12), quarantined("hold_id is a number", "12"), id="hold_id a number"),
    pytest.param(fields(hold_id=None), quarantined("hold_id is null", ""), id="hold_id null"),
    pytest.param(without("hold_id"), quarantined("hold_id is missing", ""), id="hold_id missing"),
    pytest.param(fields(hold_id=""), quarantined("hold_id is empty text", ""), id="hold_id empty"),
    pytest.param(
        fields(hold_id={"id": "h_1"}), quarantined("hold_id is an object", '{"id": "h_1"}'), id="hold_id an object"
    ),
    pytest.param(fields(hold_id="h_\x00"), quarantined("hold_id holds a NUL", "h_\ufffd"), id="hold_id with NUL"),
    pytest.param(
        fields(hold_id=".."), quarantined("hold_id is '..', which a request path cannot carry", ".."), id="hold_id .."
    ),
    pytest.param(
        fields(hold_id="."), quarantined("hold_id is '.', which a request path cannot carry", "."), id="hold_id ."
    ),
    # run_id
    pytest.param(
        fields(run_id="r_" + "7" * 5000), quarantined("run_id is 5,002 characters long"), id="run_id too long"
    ),
    pytest.param(fields(run_id=["r_1"]), quarantined("run_id is an array, not text"), id="run_id an array"),
    pytest.param(fields(run_id=None), stored(run_id=""), id="run_id null"),
    pytest.param(fields(run_id=".."), quarantined("run_id is '..', which a request path cannot carry"), id="run_id .."),
    pytest.param(
        fields(run_id="r_\ud800"), quarantined("run_id holds a NUL or a lone surrogate"), id="run_id lone surrogate"
    ),
    # agent, capability, status
    pytest.param(
        fields(agent="a" * 250),
        quarantined("agent is 250 characters long; Review Queue stores at most 200"),
        id="agent 250 characters",
    ),
    pytest.param(fields(agent="a" * 200), stored(agent="a" * 200), id="agent 200 characters"),
    pytest.param(fields(agent={"name": "x"}), quarantined("agent is an object, not text"), id="agent an object"),
    pytest.param(fields(agent="bot\x00"), stored(agent="bot\ufffd"), id="agent with NUL"),
    pytest.param(fields(capability="c" * 10_000), stored(capability="c" * 10_000), id="capability 10,000 characters"),
    pytest.param(fields(capability=7), quarantined("capability is a number, not text"), id="capability a number"),
    pytest.param(fields(status=["open"]), quarantined("status is an array, not text"), id="status an array"),
    pytest.param(fields(status="teleported"), stored(status="open"), id="status unknown"),
    pytest.param(fields(status=None), stored(status="open"), id="status null"),
    # question, intent, details
    pytest.param(
        fields(question={"text": "Refund?"}), quarantined("question is an object, not text"), id="question an object"
    ),
    pytest.param(fields(question=None), stored(question=""), id="question null"),
    pytest.param(
        fields(question="?" * 1_000_000), stored(question="?" * 1_000_000), id="question a million characters"
    ),
    pytest.param(
        fields(question="Refund\x00 now\udfff"),
        stored(question="Refund\ufffd now\ufffd"),
        id="question NUL and lone surrogate",
    ),
    pytest.param(fields(intent=3.5), quarantined("intent is a number, not text"), id="intent a number"),
    pytest.param(fields(details=["a", "b"]), quarantined("details is an array, not text"), id="details an array"),
    pytest.param(fields(details=True), quarantined("details is a boolean, not text"), id="details a boolean"),
    # actions
    pytest.param(fields(actions="approve"), quarantined("actions is text, not an array"), id="actions text"),
    pytest.param(fields(actions=["approve", 1]), quarantined("actions must all be text"), id="actions with a number"),
    pytest.param(fields(actions=["approve", "launch"]), stored(actions=["approve"]), id="actions unknown"),
    pytest.param(fields(actions=None), stored(actions=[]), id="actions null"),
    # items
    pytest.param(fields(items="A-1"), quarantined("items is text, not an array"), id="items text"),
    pytest.param(fields(items=["A-1"]), quarantined("items must all be objects"), id="item not an object"),
    pytest.param(
        lambda hold: hold | {"items": [{"title": "t", "data": {}}]},
        quarantined("an item id is missing"),
        id="item id missing",
    ),
    pytest.param(item(id=12), quarantined("an item id is a number, not an id"), id="item id a number"),
    pytest.param(item(id=None), quarantined("an item id is null, not an id"), id="item id null"),
    pytest.param(
        item(id="call_" + "9" * 496),
        quarantined("item id is 501 characters long; Review Queue stores at most 500"),
        id="item id too long",
    ),
    pytest.param(item(id="call_\x00"), quarantined("item id holds a NUL"), id="item id with NUL"),
    pytest.param(second_item_like_the_first(), quarantined("two items have the same id"), id="item ids repeat"),
    pytest.param(item(title={"t": 1}), quarantined("title is an object, not text"), id="item title an object"),
    pytest.param(item(title="A\x00"), stored(item_title="A\ufffd"), id="item title with NUL"),
    pytest.param(item(data="refund"), quarantined("is text, not an object"), id="item data text"),
    pytest.param(item(data=[1, 2]), quarantined("is an array, not an object"), id="item data an array"),
    pytest.param(item(data=None), stored(item_data=None), id="item data null"),
    pytest.param(
        item(data={"amount": float("nan"), "limit": float("inf")}),
        stored(item_data={"amount": "NaN", "limit": "Infinity"}),
        id="item data NaN and Infinity",
    ),
    pytest.param(
        item(data={"amount": 10**4100}),
        stored(item_data={"amount": "1" + "0" * 4100}),
        id="item data a 4,101-digit integer",
    ),
    pytest.param(
        item(data={"amount": 1e308, "tiny": -0.0}),
        stored(item_data={"amount": 10**308, "tiny": 0.0}),
        id="item data huge float",
    ),
    pytest.param(item(data={"note\x00": "a\x00b"}), stored(item_data={"note\ufffd": "a\ufffdb"}), id="item data NUL"),
    pytest.param(item(data=nested(50)), stored(item_data=nested(50)), id="item data nested 50 levels"),
    pytest.param(item(data=nested(100)), quarantined("more than 64 levels deep"), id="item data nested 100 levels"),
    pytest.param(item(data=nested(9000)), quarantined("more than 64 levels deep"), id="item data nested 9,000 levels"),
    # files
    pytest.param(fields(files="photo.jpg"), quarantined("files is text, not an array"), id="files text"),
    pytest.param(fields(files=[1]), quarantined("files must all be objects"), id="file not an object"),
    pytest.param(file(id=12), quarantined("a file id is a number, not an id"), id="file id a number"),
    pytest.param(file(id="f" * 501), quarantined("file id is 501 characters long"), id="file id too long"),
    pytest.param(file(id=".."), quarantined("a file id is '..', which a request path cannot carry"), id="file id .."),
    pytest.param(file(id="."), quarantined("a file id is '.', which a request path cannot carry"), id="file id ."),
    pytest.param(file(name=["photo.jpg"]), quarantined("name is an array, not text"), id="file name an array"),
    pytest.param(
        file(size="large"),
        stored(files=[{"id": "f_1", "name": "photo.jpg", "content_type": "image/jpeg", "size": None}]),
        id="file size text",
    ),
    pytest.param(
        file(size=10**30),
        stored(files=[{"id": "f_1", "name": "photo.jpg", "content_type": "image/jpeg", "size": 10**30}]),
        id="file size huge",
    ),
    # times and the decision
    pytest.param(
        fields(created_at="yesterday"), quarantined("created_at is not an ISO-8601 time"), id="created_at not a time"
    ),
    pytest.param(
        fields(created_at=1764410400), quarantined("created_at is not an ISO-8601 time"), id="created_at a number"
    ),
    pytest.param(
        fields(created_at="0001-01-01T00:00:00+01:00"),
        quarantined("created_at is not an ISO-8601 time"),
        id="created_at before year 1",
    ),
    pytest.param(
        fields(expires_at="9999-12-31T23:59:59-01:00"),
        quarantined("expires_at is not an ISO-8601 time"),
        id="expires_at after year 9999",
    ),
    pytest.param(
        fields(expires_at={"in": "1h"}), quarantined("expires_at is not an ISO-8601 time"), id="expires_at an object"
    ),
    pytest.param(fields(expires_at=None), stored(expires_at=None), id="expires_at null"),
    pytest.param(fields(decision="approved"), quarantined("decision is text, not an object"), id="decision text"),
    # the hold itself
    pytest.param(instead("h_1"), quarantined("the hold is text, not an object", ""), id="hold text"),
    pytest.param(instead(None), quarantined("the hold is null, not an object", ""), id="hold null"),
    pytest.param(instead([]), quarantined("the hold is an array, not an object", ""), id="hold an array"),
    pytest.param(
        fields(surprise=nested(70)), quarantined("more than 64 levels deep"), id="unknown field nested 70 levels"
    ),
]


@pytest.mark.parametrize("change, outcome", HOSTILE)
def test_a_hundred_good_holds_arrive_around_one_hostile_hold(platform_client, platform_state, change, outcome):
    hostile = hundred_holds_around(platform_state, change)

    result = sync.sync_env(platform_client, "default")

    good = Hold.objects.exclude(hold_id=hostile).filter(items__isnull=False).distinct()
    assert result.error == ""
    assert good.count() == GOOD_HOLDS
    outcome(hostile)
    assert SyncState.objects.get(env="default").quarantined_count == QuarantinedHold.objects.count()


def test_a_quarantined_hold_leaves_quarantine_once_it_is_stored(platform_client, platform_state):
    hold_id = hundred_holds_around(platform_state, fields(agent="a" * 250))
    sync.sync_env(platform_client, "default")
    sync.sync_env(platform_client, "default")
    assert QuarantinedHold.objects.get().times_seen == 2

    del platform_state.sent_as[hold_id]
    result = sync.sync_env(platform_client, "default")

    assert result.created == 1 and result.quarantined == 0
    assert Hold.objects.filter(hold_id=hold_id).exists()
    assert not QuarantinedHold.objects.exists()


def test_a_quarantined_hold_leaves_quarantine_when_it_leaves_the_platform(platform_client, platform_state):
    hold_id = hundred_holds_around(platform_state, fields(created_at="soon"))
    sync.sync_env(platform_client, "default")

    platform_state.expire("default", hold_id)
    sync.sync_env(platform_client, "default")

    assert not QuarantinedHold.objects.exists()
    assert SyncState.objects.get(env="default").quarantined_count == 0


def test_a_mirrored_hold_that_turns_unreadable_stays_open_as_it_was(platform_client, platform_state):
    hold_id = platform_state.add_hold("default", {"question": "Refund 10.00?"})["hold_id"]
    sync.sync_env(platform_client, "default")

    platform_state.sent_as[hold_id] = fields(question=["Refund 10,000.00?"])
    result = sync.sync_env(platform_client, "default")

    hold = Hold.objects.get(hold_id=hold_id)
    assert result.error == "" and result.closed == 0
    assert hold.status == "open" and hold.question == "Refund 10.00?"
    assert QuarantinedHold.objects.get().hold_id == hold_id
    assert not [r for r in platform_state.requests if r["path"].endswith(f"/holds/{hold_id}")]


def test_a_value_the_database_refuses_quarantines_only_its_hold(platform_client, platform_state, monkeypatch):
    # Past the index limit on purpose: random text does not compress, so PostgreSQL refuses the index entry.
    monkeypatch.setattr(mirrored, "MAX_INDEXED_LENGTH", 10_000)
    unindexable = "call_" + "".join(chr(0x4E00 + (n * 7919) % 20000) for n in range(3000))
    hostile = hundred_holds_around(platform_state, item(id=unindexable))

    with CaptureQueriesContext(connection) as queries:
        result = sync.sync_env(platform_client, "default")

    assert result.error == "" and result.created == GOOD_HOLDS
    assert Hold.objects.count() == GOOD_HOLDS and not Hold.objects.filter(hold_id=hostile).exists()
    assert "the database refused it: index row" in QuarantinedHold.objects.get(hold_id=hostile).reason
    assert any("SAVEPOINT" in query["sql"] for query in queries.captured_queries)


def test_queries_stay_constant_with_a_quarantine(platform_client, platform_state):
    hundred_holds_around(platform_state, fields(hold_id=12))
    sync.sync_env(platform_client, "default")
    with CaptureQueriesContext(connection) as first:
        sync.sync_env(platform_client, "default")
    platform_state.generate("default", 300)
    sync.sync_env(platform_client, "default")

    with CaptureQueriesContext(connection) as later:
        sync.sync_env(platform_client, "default")

    assert len(later.captured_queries) == len(first.captured_queries)


def test_the_queue_counts_quarantined_holds_and_an_admin_reads_why(platform_client, platform_state, client, alice):
    hundred_holds_around(platform_state, fields(expires_at="tomorrow"))
    platform_state.add_hold("default", {"hold_id": "h_900"})
    platform_state.sent_as["h_900"] = fields(agent=None, hold_id=None)
    sync.sync_env(platform_client, "default")
    client.force_login(alice)

    queue = client.get(reverse("queue")).content.decode()
    admin = User.objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(admin)
    listing = client.get(reverse("admin:holds_quarantinedhold_changelist"))
    detail = client.get(reverse("admin:holds_quarantinedhold_change", args=[QuarantinedHold.objects.first().pk]))

    assert "2 holds from the platform could not be read; an admin can see why." in queue
    assert listing.status_code == 200 and "expires_at is not an ISO-8601 time" in listing.content.decode()
    assert detail.status_code == 200 and 'name="reason"' not in detail.content.decode()  # shown, not editable


@pytest.mark.parametrize(
    "failure, banner",
    [
        ("platform", "Platform unreachable since"),
        ("ours", "because of an error in Review Queue, see the worker's log."),
    ],
)
def test_the_banner_names_whose_error_stops_the_sync(
    platform_client, platform_state, alice_client, monkeypatch, failure, banner
):
    if failure == "platform":
        platform_state.push_faults([{"status": 503}])
        sync.sync_env(platform_client, "default")
    else:

        def broken(*arguments):
            raise RuntimeError("connection to db.internal:5432 refused for user rq")

        monkeypatch.setattr(writing, "store_listed", broken)
        with pytest.raises(RuntimeError):
            sync.sync_env(platform_client, "default")

    page = alice_client.get(reverse("queue")).content.decode()

    assert banner in page
    assert ("Platform unreachable" in page) == (failure == "platform")
    assert "RuntimeError" not in page and "db.internal" not in page  # the worker's log has the exception
