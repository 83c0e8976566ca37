"""Every safeguard of the pages holds on the API: scopes and roles, team scopes, four eyes, revocation, the rate,
retries that send once, and bad input answered by a problem document."""

import io
import json
import time
from datetime import timedelta

import pytest
import time_machine
from django.core.cache import cache
from django.core.management import CommandError, call_command
from django.test import Client

from api import ratelimit, tokens
from api import tasks as api_tasks
from api.models import ApiToken
from audit.models import AuditEvent
from holds.deciding import delivery
from holds.models import Decision, Hold
from reviewqueue import roles
from tests.helpers.api import approve_every_item, bearer, token_of
from tests.helpers.approvals_setup import decision_posts
from tests.helpers.duplicates import every_duplicate
from tests.helpers.users import make_user, scoped_group

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]

PROBLEM = "application/problem+json"


def decide(client, secret, hold, body=None, **headers):
    return client.post(
        f"/api/v1/holds/{hold.pk}/decision",
        json.dumps(body if body is not None else approve_every_item(hold)),
        content_type="application/json",
        **bearer(secret),
        **headers,
    )


def deliver_all(platform_client):
    for pk in Decision.objects.filter(state="sending").values_list("pk", flat=True):
        delivery.deliver(pk, platform_client)


def test_a_token_made_by_createtoken_lists_reads_and_decides_a_hold(client, samples, alice, platform_client):
    out = io.StringIO()
    call_command("createtoken", "alice", "--name", "on-call script", "--scopes", "read,decide", stdout=out)
    secret = out.getvalue().strip().splitlines()[-1]
    assert secret.startswith("rq_") and len(secret) >= 3 + 43
    stored = ApiToken.objects.get(user=alice)
    assert stored.scopes == ["read", "decide"] and secret not in repr(stored.__dict__)

    listed = client.get("/api/v1/holds?hold_id=h_12", **bearer(secret)).json()
    assert [hold["hold_id"] for hold in listed["holds"]] == ["h_12"]
    read = client.get(listed["holds"][0]["url"], **bearer(secret))
    assert read.json()["items"][0]["data"] == {"order_id": "A-1001", "amount": "49.90"}
    hold = samples["h_12"]
    answer = decide(client, secret, hold, HTTP_IF_MATCH=read["ETag"])

    assert answer.status_code == 201, answer.content
    assert answer.json()["state"] == "stored"
    deliver_all(platform_client)
    status = client.get(answer["Location"], **bearer(secret)).json()
    assert status["state"] == "applied" and status["decided_by"] == "alice"
    submitted = AuditEvent.objects.get(kind="decision_submitted", hold_id="h_12")
    assert submitted.payload["channel"] == "api" and submitted.actor == alice
    assert AuditEvent.objects.filter(kind__in=["token_created", "token_first_used"]).count() == 2


def test_a_retry_with_the_same_key_answers_the_first_answer_and_the_platform_gets_one_decision(
    client, samples, alice, platform_client, platform_state
):
    secret, hold = token_of(alice), samples["h_12"]

    first = decide(client, secret, hold, HTTP_IDEMPOTENCY_KEY="retry-1")
    again = decide(client, secret, hold, HTTP_IDEMPOTENCY_KEY="retry-1")
    deliver_all(platform_client)
    other = decide(
        client, secret, hold, {"items": [{"id": "A-1001", "action": "reject"}]}, HTTP_IDEMPOTENCY_KEY="retry-1"
    )

    assert first.status_code == again.status_code == 201
    assert again.content == first.content and again["Idempotent-Replayed"] == "true"
    assert Decision.objects.filter(hold=hold).count() == 1
    assert len(decision_posts(platform_state)) == 1
    assert other.status_code == 422 and other["Content-Type"] == PROBLEM


def test_a_key_is_kept_a_day_then_a_retry_is_a_new_request_which_the_decided_hold_refuses(
    client, samples, alice, platform_client, platform_state
):
    secret, hold = token_of(alice), samples["h_12"]
    first = decide(client, secret, hold, HTTP_IDEMPOTENCY_KEY="retry-2")
    deliver_all(platform_client)

    with time_machine.travel(timedelta(hours=23, minutes=59)):
        assert api_tasks.forget_old_idempotency_keys() == 0
    with time_machine.travel(timedelta(hours=24, minutes=1)):
        assert api_tasks.forget_old_idempotency_keys() == 1
        late = decide(client, secret, hold, HTTP_IDEMPOTENCY_KEY="retry-2")

    assert first.status_code == 201 and late.status_code == 409 and "Idempotent-Replayed" not in late
    assert Decision.objects.filter(hold=hold).count() == 1 and len(decision_posts(platform_state)) == 1


def test_a_second_token_of_the_same_person_does_not_make_four_eyes(
    client, large_refunds, refund, alice, bob, platform_state
):
    first, second = token_of(alice, name="laptop"), token_of(alice, name="bot")

    waiting = decide(client, first, refund)
    again = decide(client, second, refund)

    assert waiting.status_code == 202 and waiting.json()["state"] == "waiting"
    assert again.status_code == 409 and again["Content-Type"] == PROBLEM
    assert "another person must give the next one" in again.json()["detail"]
    assert not Decision.objects.filter(hold=refund).exists()
    assert decide(client, token_of(bob), refund).status_code == 201


def test_an_approval_is_taken_back_only_by_its_approver_within_the_undo_window(
    client, large_refunds, refund, alice, bob, settings
):
    settings.UNDO_SECONDS = 10
    alices, bobs = token_of(alice), token_of(bob)

    def undo(secret, pk):
        return client.post(f"/api/v1/approvals/{pk}/undo", **bearer(secret))

    first = decide(client, alices, refund).json()["waiting"]["approval"]
    by_bob, by_alice, again = undo(bobs, first), undo(alices, first), undo(alices, first)
    second = decide(client, alices, refund).json()["waiting"]["approval"]
    with time_machine.travel(timedelta(seconds=11)):
        late = undo(alices, second)

    assert by_bob.status_code == 403 and by_bob["Content-Type"] == PROBLEM
    assert by_alice.status_code == 200 and by_alice.json() == {"approval": first, "hold": refund.pk}
    assert again.status_code == 404
    assert late.status_code == 409 and late.json()["type"].endswith("too-late")
    assert AuditEvent.objects.filter(kind="approval_withdrawn", hold_id=refund.hold_id).count() == 1
    assert not Decision.objects.filter(hold=refund).exists()


def test_a_token_out_of_the_holds_team_scope_gets_the_same_404_as_for_no_hold(
    client, platform_state, platform_client, alice
):
    from tests.helpers.users import add_hold

    hold = add_hold(platform_state, platform_client, "billing-agent")
    scoped = make_user("sam", roles.REVIEWERS)
    scoped.groups.add(scoped_group("Support", agent="support-*"))
    secret = token_of(scoped)

    hidden = client.get(f"/api/v1/holds/{hold.pk}", **bearer(secret))
    missing = client.get(f"/api/v1/holds/{hold.pk + 1000}", **bearer(secret))
    refused = decide(client, secret, hold)

    assert hidden.status_code == missing.status_code == refused.status_code == 404
    assert hidden.json()["detail"] == missing.json()["detail"] == refused.json()["detail"]
    assert client.get("/api/v1/holds", **bearer(secret)).json()["holds"] == []
    assert not Decision.objects.exists()


def test_a_revoked_token_gets_401_with_a_bearer_challenge(client, alice):
    secret = token_of(alice)
    assert client.get("/api/v1/holds", **bearer(secret)).status_code == 200
    out = io.StringIO()
    call_command("createtoken", "alice", "--revoke", secret, stdout=out)

    refused = client.get("/api/v1/holds", **bearer(secret))

    assert refused.status_code == 401 and refused["Content-Type"] == PROBLEM
    assert refused["WWW-Authenticate"].startswith("Bearer") and 'error="invalid_token"' in refused["WWW-Authenticate"]
    assert AuditEvent.objects.filter(kind="token_revoked").count() == 1


def test_a_deactivated_user_or_one_who_lost_the_role_stops_at_once(client, alice, bob):
    alices, bobs = token_of(alice), token_of(bob)
    alice.is_active = False
    alice.save()
    bob.groups.clear()

    assert client.get("/api/v1/holds", **bearer(alices)).status_code == 401
    lost = client.get("/api/v1/holds", **bearer(bobs))
    assert lost.status_code == 403 and "Reviewers" in lost.json()["detail"]


def test_scopes_narrow_a_token(client, samples, alice, audrey):
    reader = token_of(alice, "read")
    refused = decide(client, reader, samples["h_12"])
    assert refused.status_code == 403 and 'scope="decide"' in refused["WWW-Authenticate"]
    assert client.get("/api/v1/audit/events", **bearer(reader)).status_code == 403
    auditor = token_of(audrey, "audit")
    assert client.get("/api/v1/audit/events?view=all", **bearer(auditor)).status_code == 200
    assert client.get("/api/v1/holds", **bearer(auditor)).status_code == 403


def test_session_cookies_are_not_read_and_the_tokens_page_still_checks_csrf(alice):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)

    assert browser.get("/api/v1/holds").status_code == 401
    assert browser.post("/api/v1/holds/1/decision", "{}", content_type="application/json").status_code == 401
    assert browser.post("/preferences/api-tokens", {"name": "x", "scopes": "read"}).status_code == 403
    assert not ApiToken.objects.exists()


@pytest.fixture
def uncounted():
    """No request counted yet, and the test's requests all in one minute of the clock: the counts live in Redis,
    beyond the test's transaction, under a key per minute, and a test crossing a minute's end would start again."""
    cache.clear()
    with time_machine.travel(time.time() // ratelimit.WINDOW_SECONDS * ratelimit.WINDOW_SECONDS + 60):
        yield


@pytest.mark.usefixtures("uncounted")
def test_the_rate_counts_a_persons_requests_across_all_their_tokens(client, alice, bob, settings):
    settings.API_RATE_PER_MINUTE = 3
    laptop, bot, spare = (token_of(alice, name=name) for name in ("laptop", "bot", "spare"))
    answers = [client.get("/api/v1/holds", **bearer(secret)) for secret in (laptop, bot, spare, laptop, spare)]
    bobs = client.get("/api/v1/holds", **bearer(token_of(bob)))

    assert [answer.status_code for answer in answers] == [200, 200, 200, 429, 429]
    assert 1 <= int(answers[3]["Retry-After"]) <= 60 and answers[3]["Content-Type"] == PROBLEM
    assert "Your tokens together may make 3 requests a minute" in answers[4].json()["detail"]
    assert bobs.status_code == 200


def test_a_person_holds_at_most_ten_live_tokens_on_the_page_and_the_command(client, alice):
    client.force_login(alice)
    made = [token_of(alice, name=f"script {number}") for number in range(tokens.MAX_LIVE - 1)]
    tenth = client.post("/preferences/api-tokens", {"name": "tenth", "scopes": ["read"]})
    eleventh = client.post("/preferences/api-tokens", {"name": "eleventh", "scopes": ["read"]})
    with pytest.raises(CommandError, match="holds 10 live tokens"):
        call_command("createtoken", "alice", "--name", "twelfth", stdout=io.StringIO())
    tokens.revoke(tokens.by_secret(made[0]))
    after_a_revoke = client.post("/preferences/api-tokens", {"name": "again", "scopes": ["read"]})

    assert tenth.status_code == 201
    assert eleventh.status_code == 400 and eleventh.context["created"] is None
    assert "holds 10 live tokens, the most a person may hold" in eleventh.content.decode()
    assert after_a_revoke.status_code == 201
    assert tokens.live(alice).count() == tokens.MAX_LIVE
    assert not ApiToken.objects.filter(name__in=["eleventh", "twelfth"]).exists()


def test_an_expired_token_no_longer_counts_against_the_ten(alice):
    for number in range(tokens.MAX_LIVE):
        tokens.create(alice, f"old {number}", ["read"], days=1)

    with time_machine.travel(timedelta(days=1, seconds=1)):
        made, _ = tokens.create(alice, "new", ["read"], days=1)

    assert made.name == "new"


@pytest.mark.usefixtures("uncounted")
def test_refused_tokens_are_limited_per_client_address(client, alice, settings):
    settings.API_RATE_PER_MINUTE = 3
    guesses = [client.get("/api/v1/holds", **bearer(f"rq_guess{number}")) for number in range(4)]
    elsewhere = client.get("/api/v1/holds", REMOTE_ADDR="198.51.100.9", **bearer("rq_guess9"))
    alices = client.get("/api/v1/holds", **bearer(token_of(alice)))

    assert [answer.status_code for answer in guesses] == [401, 401, 401, 429]
    assert "refused" in guesses[3].json()["detail"] and int(guesses[3]["Retry-After"]) >= 1
    assert elsewhere.status_code == 401
    assert alices.status_code == 200


def test_bad_input_is_a_problem_document_with_field_errors(client, samples, alice):
    secret, hold = token_of(alice), samples["h_13"]
    raised = {
        "items": [
            {"id": "toolu_01A9xQ2mZ", "action": "approve"},
            {"id": "toolu_01B7kR4pW", "action": "edit", "data": {**hold.items.all()[1].data, "amount": "500.00"}},
        ]
    }

    malformed = client.get("/api/v1/holds?sort=sideways", **bearer(secret))
    cursor = client.get("/api/v1/holds?after=forged", **bearer(secret))
    unreadable = decide(client, secret, hold, {"items": [{"id": "toolu_01A9xQ2mZ", "action": "maybe"}]})
    too_much = decide(client, secret, hold, raised)
    not_json = client.post(f"/api/v1/holds/{hold.pk}/decision", "{", content_type="application/json", **bearer(secret))

    assert malformed.status_code == 400 and malformed.json()["errors"][0]["field"] == "sort"
    assert cursor.status_code == 400 and cursor.json()["errors"][0]["field"] == "after"
    assert unreadable.status_code == 400 and unreadable.json()["errors"][0]["field"] == "items[0].action"
    assert too_much.status_code == 422
    assert too_much.json()["errors"][0]["field"] == "items[1].data.amount"
    assert "must not be more than" in too_much.json()["errors"][0]["message"]
    assert not_json.status_code == 400 and not_json["Content-Type"] == PROBLEM
    assert not Decision.objects.exists()


def test_every_error_under_api_is_a_problem_document(client, alice):
    secret = token_of(alice)
    for answer, status in [
        (client.get("/api/v1/no-such-thing", **bearer(secret)), 404),
        (client.delete("/api/v1/holds", **bearer(secret)), 405),
        (client.get("/api/v1/holds?q=%00", **bearer(secret)), 400),
        (client.get("/api/v1/holds"), 401),
    ]:
        assert (answer.status_code, answer["Content-Type"]) == (status, PROBLEM)
        assert answer.json()["status"] == status
    assert "GET" in client.delete("/api/v1/holds", **bearer(secret))["Allow"]


def test_a_hold_decided_or_changed_meanwhile_is_a_409(client, samples, alice, bob):
    hold = samples["h_12"]
    secret = token_of(alice)
    etag = client.get(f"/api/v1/holds/{hold.pk}", **bearer(secret))["ETag"]
    Hold.objects.filter(pk=hold.pk).update(payload_digest="0" * 64)  # as sync records the platform's change

    changed = decide(client, secret, hold, HTTP_IF_MATCH=etag)
    assert decide(client, token_of(bob), hold).status_code == 201
    decided = decide(client, secret, hold)

    assert changed.status_code == 409 and changed.json()["type"].endswith("changed-meanwhile")
    assert decided.status_code == 409 and decided.json()["type"].endswith("already-decided")


def test_undo_assignment_and_notes_go_the_hold_pages_way(client, samples, alice, bob, settings):
    settings.UNDO_SECONDS = 30
    secret, hold = token_of(alice), samples["h_12"]

    assigned = client.post(
        f"/api/v1/holds/{hold.pk}/assignment",
        {"user": "bob", "note": "yours"},
        content_type="application/json",
        **bearer(secret),
    )
    nobody = client.post(
        f"/api/v1/holds/{hold.pk}/assignment", {"user": "mallory"}, content_type="application/json", **bearer(secret)
    )
    noted = client.post(
        f"/api/v1/holds/{hold.pk}/notes", {"text": "@bob look"}, content_type="application/json", **bearer(secret)
    )
    made = decide(client, secret, hold).json()["decision"]
    undone = client.post(f"/api/v1/decisions/{made['id']}/undo", **bearer(secret))
    not_his = client.post(f"/api/v1/decisions/{made['id']}/undo", **bearer(token_of(bob)))

    assert assigned.status_code == 200 and assigned.json()["assignee"] == "bob"
    assert nobody.status_code == 422 and nobody.json()["errors"][0]["field"] == "user"
    assert noted.status_code == 201 and noted.json()["text"] == "@bob look"
    assert made["undoable"] and undone.status_code == 200 and undone.json()["state"] == "withdrawn"
    assert not_his.status_code == 403
    kinds = set(AuditEvent.objects.values_list("kind", flat=True))
    assert {"assigned", "note_added", "decision_submitted", "withdrawn"} <= kinds


def test_an_auditor_pulls_the_audit_trail_and_its_csv(client, samples, alice, audrey):
    decide(client, token_of(alice), samples["h_12"])
    secret = token_of(audrey, "audit")

    page = client.get("/api/v1/audit/events?kind=decision_submitted", **bearer(secret))
    csv = client.get("/api/v1/audit/events.csv?view=all", **bearer(secret))

    assert [event["channel"] for event in page.json()["events"]] == ["API"]
    assert csv.status_code == 200 and csv["Content-Type"].startswith("text/csv")
    assert b"token_created" in b"".join(csv.streaming_content)


def test_the_tokens_page_shows_a_new_token_once_and_revokes_it(client, alice):
    client.force_login(alice)

    made = client.post("/preferences/api-tokens", {"name": "cli", "scopes": ["read", "decide"], "days": "30"})
    secret = made.context["created"][1]
    listed = client.get("/preferences/api-tokens")
    revoked = client.post("/preferences/api-tokens", {"revoke": ApiToken.objects.get().pk}, follow=True)

    assert made.status_code == 201 and secret.encode() in made.content
    assert secret.encode() not in listed.content and b"cli" in listed.content
    assert b"revoked" in revoked.content
    assert Client().get("/api/v1/holds", **bearer(secret)).status_code == 401


def test_the_admin_lists_every_token_and_revokes_any(admin_client, alice, bob):
    token_of(alice, name="alice-bot"), token_of(bob, name="bob-bot")

    listed = admin_client.get("/admin/api/apitoken/")
    admin_client.post(
        "/admin/api/apitoken/",
        {"action": "revoke", "_selected_action": list(ApiToken.objects.values_list("pk", flat=True))},
    )

    assert b"alice-bot" in listed.content and b"bob-bot" in listed.content
    assert not ApiToken.objects.filter(revoked_at__isnull=True).exists()


def test_an_edit_is_read_as_the_form_reads_it_and_an_unchanged_one_is_an_approval(client, samples, alice):
    hold = samples["h_13"]
    first, second = (item.data for item in hold.items.all())
    body = {
        "items": [
            {"id": "toolu_01A9xQ2mZ", "action": "edit", "data": first},
            {"id": "toolu_01B7kR4pW", "action": "edit", "data": {**second, "amount": "100"}, "comment": "partial"},
        ],
        "duplicates_checked": every_duplicate(hold),  # an A-1001 refund: the script checked the others
    }

    made = decide(client, token_of(alice), hold, body)

    assert made.status_code == 201, made.content
    items = made.json()["decision"]["items"]
    assert [item["action"] for item in items] == ["approve", "edit"]
    assert items[1]["data"] == {**second, "amount": "100.00"} and items[1]["comment"] == "partial"
