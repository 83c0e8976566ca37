"""Fuzzing: hostile requests to every URL and form field of the app, as every role, never a 5xx.

Hypothesis draws each request: a role (anonymous, reviewer, auditor, admin), one of the app's
named URLs (the admin's changelists, forms, filters and autocomplete, the CSV export and the
file download included), its path parameters, query parameters and, for a POST, form fields.
Every value is either one the app itself offers (a real id, a real cursor, the agent's own
data) or a hostile one: NUL, Unicode digits, huge numbers, Infinity, malformed cursors and
JSON, dates out of range, long text. Streaming responses are read to the end, so a stream
that breaks after its 200 fails too. The examples are derandomized: every run tries the same
requests, against Postgres and the simulated platform over HTTP. ``-s`` shows the tally.
"""

import base64
import json
from collections import Counter
from urllib.parse import quote, urlencode

import pytest
from django.contrib import admin
from django.db import transaction
from django.test import Client, RequestFactory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit import events
from audit.models import AuditEvent, EventKind
from holds.deciding import decisions, delivery
from holds.deciding.decisions import ItemChoice
from holds.models import Decision, Hold
from holds.queue import listing as queue
from notifications import notify
from notifications.models import Notification, WebhookChannel
from reviewqueue import readers
from tests.helpers.duplicates import every_duplicate
from tests.helpers.forms import fields_of
from tests.helpers.reviewing import review_form
from tests.helpers.urls import named_urls, real_path_values
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db

EXAMPLES = 1200
ROLES = ("anonymous", "reviewer", "auditor", "admin")

QUERY_PARAMS = {
    "queue": [
        "agent",
        "capability",
        "env",
        "expiring",
        "claim",
        "q",
        "min_amount",
        "max_amount",
        "sort",
        "after",
        "loaded_at",
    ],
    "audit:list": [
        "since",
        "until",
        "kind",
        "reviewer",
        "agent",
        "action",
        "outcome",
        "hold",
        "run",
        "item",
        "q",
        "after",
    ],
    "audit:export": ["since", "until", "kind", "reviewer", "agent", "action", "outcome", "hold", "run", "item", "q"],
    "audit:stats": ["since", "until"],
    "hold-file": ["inline"],
    "login": ["next"],
    "admin:login": ["next"],
    "admin:autocomplete": ["app_label", "model_name", "field_name", "term", "page"],
}
ADMIN_LIST_PARAMS = ["q", "o", "p", "all", "e", "_to_field", "_popup", "_changelist_filters"]
FORM_FIELDS = {
    "notifications-read": ["id"],
    "decision-undo": ["decision"],
    "bulk-review": ["hold", "action", "comment", "digest", "confirm"],
    "notification-preferences": list(Notification.Event.values),
    "login": ["username", "password", "next"],
    "admin:login": ["username", "password", "next"],
    "admin:password_change": ["old_password", "new_password1", "new_password2"],
    "admin:auth_user_password_change": ["password1", "password2", "usable_password"],
}
ADMIN_CHANGELIST_FORM = ["action", "_selected_action", "select_across", "index"]
WEIGHTED = {
    "queue",
    "hold-review",
    "bulk-review",
    "notifications-read",
    "notification-preferences",
    "audit:list",
    "audit:export",
}

HOSTILE = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "²",
    "١٢٣",
    "１２",
    "9" * 5000,
    "0" * 5000 + "1",
    "-1",
    "0",
    "+1",
    " 1 ",
    "1.5",
    "-0",
    str(2**31),
    str(2**63),
    str(10**30),
    "1e309",
    "-1e309",
    "Infinity",
    "-Infinity",
    "NaN",
    "nan",
    "inf",
    "2026-02-30",
    "9999-12-31",
    "0001-01-01",
    "10000-01-01",
    "2026-01-01T00:00:00+00:00",
    "0001-01-01T00:00:00+01:00",
    "9999-12-31T23:59:59-01:00",
    "2026-01-01T00:00:00",
    "yesterday",
    "[" + "1" * 5000 + "]",
    "[1e309]",
    "[-1e309]",
    '["\\u0000"]',
    '["\\ud800"]',
    '{"\\u0000": 1}',
    "[" * 5000,
    "{}",
    "[]",
    "null",
    "true",
    '{"a": NaN}',
    "1" * 5000,
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "%",
    "%00",
    "_",
    "\\",
    "../../etc/passwd",
    "x" * 10_000,
    "\u202e",
    "🧾",
    "approve",
    "reject",
    "edit",
    "yes",
    "mine",
    "unclaimed",
    "15m",
    "claimed",
    "in_app",
    "email",
]
JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4), max_leaves=6)
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)  # a URL or a form cannot carry a lone surrogate


def mostly(usual, rare):
    """A strategy drawing from ``usual`` three times in four, else from ``rare``."""
    return st.integers(0, 3).flatmap(lambda roll: rare if roll == 0 else usual)


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


CURSORS = st.one_of(
    JSON_VALUES.map(lambda value: b64(json.dumps(value).encode())),
    st.lists(st.sampled_from(HOSTILE[:40]), min_size=1, max_size=4).map(lambda parts: b64(json.dumps(parts).encode())),
    st.binary(max_size=40).map(b64),
)
HOSTILE_VALUES = st.one_of(st.sampled_from(HOSTILE), TEXT, st.integers().map(str), st.floats().map(repr), CURSORS)


def admin_fields(superuser) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The query parameters of each admin changelist (search, order, pages, its list filters), and the form fields of
    each admin form."""
    request = RequestFactory().get("/admin/")
    request.user = superuser
    queries, forms = {}, {}
    for model, model_admin in admin.site._registry.items():
        base = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        filters = []
        for list_filter in model_admin.list_filter:
            field = list_filter[0] if isinstance(list_filter, tuple) else list_filter
            if isinstance(field, str):
                filters += [
                    field,
                    f"{field}__exact",
                    f"{field}__isnull",
                    f"{field}__gte",
                    f"{field}__lt",
                    f"{field}__id__exact",
                ]
            else:
                filters.append(field.parameter_name)
        queries[f"{base}_changelist"] = ADMIN_LIST_PARAMS + filters
        forms[f"{base}_changelist"] = ADMIN_CHANGELIST_FORM
        form_fields = list(model_admin.get_form(request).base_fields) + ["_save", "_continue"]
        forms[f"{base}_add"] = forms[f"{base}_change"] = form_fields
    return queries, forms


def fitting_role(name: str) -> str:
    if name.startswith("admin:"):
        return "admin"
    if name.startswith("audit:"):
        return "auditor"
    return "anonymous" if name == "login" else "reviewer"


@pytest.fixture
def world(samples, alice, audrey, platform_client):
    """A lived-in app: holds, a delivered decision, audit events, notifications, a webhook; the values it offers."""
    root = make_user("root", is_staff=True, is_superuser=True)
    decision = decisions.submit(
        samples["h_13"],
        alice,
        [ItemChoice("toolu_01A9xQ2mZ", "approve"), ItemChoice("toolu_01B7kR4pW", "reject", None, "no")],
        duplicates_checked=every_duplicate(samples["h_13"]),
    )
    delivery.deliver(decision.pk, platform_client)
    notify.expired([samples["h_12"]])
    events.record(EventKind.SETTING_CHANGED, payload={"note": "fuzz"})
    WebhookChannel.objects.create(name="ops", url="https://hooks.example.com/ops", secret="s3cret", events=["expired"])
    holds = list(Hold.objects.all())
    audit_rows = list(AuditEvent.objects.all())
    ids = sorted(
        {
            str(pk)
            for model in (Hold, Decision, AuditEvent, Notification, WebhookChannel)
            for pk in model.objects.values_list("pk", flat=True)
        }
        | {str(alice.pk), str(audrey.pk), str(root.pk)}
    )
    offered = {
        "ids": ids,
        "files": ["f_1", "f_9", "f_404"],
        "cursors": [queue.cursor_of(hold, sort) for hold in holds for sort in queue.ORDERS]
        + [readers.write_cursor(row.at, row.sequence) for row in audit_rows],
        "words": sorted(
            {hold.agent for hold in holds}
            | {hold.capability for hold in holds}
            | {hold.hold_id for hold in holds}
            | {hold.run_id for hold in holds}
            | set(EventKind.values)
            | set(queue.ORDERS)
            | {"default", "2026-01-01", "1", "49.90"}
        ),
        "apps": ["holds", "audit", "auth", "axes", "notificationattempt", "notification", "hold", "user", "groups"],
    }
    users = {"reviewer": alice, "auditor": audrey, "admin": root}
    return {"holds": holds, "offered": offered, "users": users}


@pytest.mark.long
@pytest.mark.timeout(300)  # 1,200 requests: up to 61 s in a busy run, near the usual 120 s
def test_no_request_from_any_role_gets_a_5xx_or_a_broken_stream(world):
    offered = world["offered"]
    clients = {role: Client() for role in ROLES}
    for role, user in world["users"].items():
        clients[role].force_login(user)
    admin_queries, admin_forms = admin_fields(world["users"]["admin"])
    query_params = QUERY_PARAMS | admin_queries
    form_fields = FORM_FIELDS | admin_forms
    urls = named_urls()
    app_urls = [url for url in urls if not url[0].startswith("admin:")]
    app_urls += [url for url in app_urls if url[0] in WEIGHTED] * 8  # the reviewers' forms get more of the examples
    admin_urls = [url for url in urls if url[0].startswith("admin:")]
    real_paths = {(name, param): real_path_values(name, param) or ["1"] for name, _, params in urls for param in params}
    holds_by_pk = {str(hold.pk): hold for hold in world["holds"]}
    statuses, tried = Counter(), Counter()

    offered_values = st.sampled_from(
        offered["ids"] + offered["files"] + offered["cursors"] + offered["words"] + offered["apps"]
    )
    values = st.one_of(offered_values, HOSTILE_VALUES)

    def fields(draw, names: list[str], most: int | None = None) -> dict[str, str | list[str]]:
        """Some of ``names`` (and a few odd names), each with a value or a list of values."""
        if not names:
            return {}
        pool = names + ["", "\x00", "x" * 300]
        chosen = draw(st.lists(st.sampled_from(pool), max_size=len(pool) if most is None else most, unique=True))
        return {name: draw(st.one_of(values, st.lists(values, min_size=2, max_size=3))) for name in chosen}

    @st.composite
    def requests(draw):
        name, path_format, params = draw(st.one_of(st.sampled_from(app_urls), st.sampled_from(admin_urls)))
        role = draw(st.one_of(st.just(fitting_role(name)), st.sampled_from(ROLES)))
        path_params = {
            param: draw(mostly(st.sampled_from(real_paths[name, param]), HOSTILE_VALUES)) for param in params
        }
        path = "/" + path_format % {param: quote(value, safe="") for param, value in path_params.items()}
        has_form = name in form_fields or name == "hold-review"
        method = draw(mostly(st.just("POST" if has_form else "GET"), st.just("GET" if has_form else "POST")))
        query = fields(draw, query_params.get(name, []))
        form = {}
        if method == "POST":
            form = fields(draw, form_fields.get(name, []))
            hold = holds_by_pk.get(path_params.get("pk", ""))
            if name == "hold-review" and hold is not None:
                shown = review_form(hold)
                form = shown | fields(draw, list(shown) + ["confirm", "back", "digest"], most=2)  # mostly a valid form
        htmx = draw(st.sampled_from([{}, {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "queue-body"}]))
        return role, method, path, query, form, htmx

    def send(role, method, path, query, form, htmx):
        client = clients[role]
        url = path + ("?" + urlencode(query, doseq=True) if query else "")
        with transaction.atomic():  # a failed request rolls back alone and leaves the test's transaction usable
            response = client.post(url, form, **htmx) if method == "POST" else client.get(url, **htmx)
            if response.streaming:
                b"".join(response.streaming_content)
        tried[role] += 1
        statuses[response.status_code] += 1
        not_ready = path == "/readyz" and response.status_code == 503 and response.json()["status"] == "not ready"
        assert response.status_code < 500 or not_ready, (role, method, url, form)  # readiness says 503 by design
        return response

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    @given(requests())
    def fuzz(request):
        role, method, path, query, form, htmx = request
        response = send(role, method, path, query, form, htmx)
        if (
            method == "POST"
            and path.endswith("/review")
            and response.status_code == 200
            and b"confirm-form" in response.content
        ):
            send(role, "POST", path, {}, fields_of(response.content.decode(), "confirm-form") | {"confirm": "yes"}, {})

    fuzz()

    total = sum(tried.values())
    print(
        f"\nfuzz: {total} requests over {len(urls)} URLs; by role {dict(sorted(tried.items()))}; "
        f"statuses {dict(sorted(statuses.items()))}"
    )
    assert total >= 1000
    assert statuses[200] and statuses[400], "the fuzz reached neither working pages nor the readers' refusals"


def test_the_fuzz_covers_every_named_url():
    names = {name for name, _, _ in named_urls()}

    assert {
        "queue",
        "hold-review",
        "audit:export",
        "hold-file",
        "notifications-read",
        "admin:autocomplete",
        "admin:audit_auditevent_changelist",
        "admin:notifications_webhookchannel_change",
    } <= names
