"""A reviewer sees what approving will do: a sentence per item, currencies, the run linked, and what was sent."""

import csv
import io

import pytest
from django.urls import reverse

from holds.deciding import decisions, delivery, describe
from holds.deciding.decisions import ItemChoice
from holds.mirror import sync
from holds.models import Decision, Hold
from reviewqueue import roles
from tests.helpers.duplicates import every_duplicate
from tests.helpers.preloaded import start_django
from tests.helpers.reviewing import confirm, field_name
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db

RUN_PAGE = "https://agentos.example.com/envs/{env}/runs/{run_id}"


@pytest.fixture
def usd_refund(platform_client, platform_state, db):
    """A refund of 20.00 USD on order A-1001 whose run id needs encoding in a URL."""
    platform_state.add_hold(
        "default",
        {
            "hold_id": "h_usd",
            "run_id": "r/7 #1",
            "items": [
                {
                    "id": "call_1",
                    "title": "refund",
                    "data": {"order_id": "A-1001", "amount": "20.00", "currency": "USD"},
                }
            ],
        },
    )
    sync.sync_env(platform_client, "default")
    return Hold.objects.get(hold_id="h_usd")


@pytest.fixture
def auditor_client(client):
    client.force_login(make_user("ada", roles.AUDITORS))
    return client


# The sentence under each item


@pytest.mark.parametrize(
    "title, data, sentence",
    [
        ("refund", {"order_id": "A-1001", "amount": "20.00", "currency": "USD"}, "Refunds 20.00 USD on order A-1001"),
        (
            "Refund 49.90 on A-1001",
            {"order_id": "A-1001", "amount": "49.90", "reason": "damaged"},
            "Refunds 49.90 on order A-1001 (reason: damaged)",
        ),
        ("issue_refund", {"amount": "20.00", "currency": "eur"}, "Refunds 20.00 EUR"),
        (
            "send_replacement",
            {"order_id": "A-1008", "quantity": 1, "express": True, "gift_note": None},
            "Calls send_replacement with order_id A-1008, quantity 1, express true, gift_note null",
        ),
        (
            "issue_credit",
            {"amount": "20.00", "currency": "USD", "order_id": "A-1001"},
            "Calls issue_credit with amount 20.00 USD, order_id A-1001",
        ),
        ("cancel_subscription", {}, "Calls cancel_subscription with no arguments"),
        ("A-1001 · 49.90", {"order_id": "A-1001", "amount": "49.90"}, "Goes ahead with order_id A-1001, amount 49.90"),
        ("refund", {"amount": "20.00", "currency": "<script>alert(1)</script>"}, "Refunds 20.00"),
    ],
)
def test_the_sentence_says_what_approving_does(title, data, sentence):
    assert describe.sentence(title, data) == sentence


def test_a_title_that_only_repeats_the_item_id_names_no_tool():
    assert describe.sentence("call_1", {"order_id": "A-1004"}, item_id="call_1") == "Goes ahead with order_id A-1004"
    assert describe.sentence("A-1004", {"amount": "15.00"}) == "Goes ahead with amount 15.00"


def test_a_long_value_is_cut_short():
    said = describe.sentence("notify", {"message": "x" * 1000})

    assert len(said) < 100 and said.endswith("…")


def test_currency_keys_names_where_the_currency_is(settings):
    settings.CURRENCY_KEYS = ["currency_code"]

    assert describe.sentence("refund", {"amount": "5.00", "currency_code": "CHF"}) == "Refunds 5.00 CHF"
    assert describe.sentence("refund", {"amount": "5.00", "currency": "USD"}) == "Refunds 5.00 (currency: USD)"


def test_the_hold_page_and_the_queue_show_the_currency(alice_client, usd_refund):
    page = alice_client.get(reverse("hold", args=[usd_refund.pk])).content.decode()
    queue = alice_client.get(reverse("queue")).content.decode()

    assert "Approving: Refunds 20.00 USD on order A-1001" in page
    assert '<td class="amount cell-amount" data-label="Amount">20.00 USD</td>' in queue


def test_agent_text_in_the_sentence_stays_escaped(alice_client, samples):
    hostile = samples["h_16"]

    page = alice_client.get(reverse("hold", args=[hostile.pk])).content.decode()

    assert 'class="does untrusted"' in page
    assert "<script>" not in page.split('class="does untrusted"', 1)[1].split("</p>", 1)[0]


# The run id as a link


def test_without_a_template_the_run_id_is_plain_text(alice_client, usd_refund):
    page = alice_client.get(reverse("hold", args=[usd_refund.pk])).content.decode()

    assert "<code>r/7 #1</code>" in page and "run-link" not in page


def test_the_run_id_links_to_the_platform_with_the_ids_encoded(alice_client, usd_refund, settings):
    settings.RUN_URL_TEMPLATE = RUN_PAGE

    page = alice_client.get(reverse("hold", args=[usd_refund.pk])).content.decode()
    run = alice_client.get(reverse("run-context", args=[usd_refund.pk])).content.decode()

    link = 'href="https://agentos.example.com/envs/default/runs/r%2F7%20%231"'
    assert link in page and link in run


def test_the_audit_pages_link_the_run(client, alice, usd_refund, platform_client, settings):
    settings.RUN_URL_TEMPLATE = RUN_PAGE
    decision = decisions.submit(
        usd_refund, alice, [ItemChoice("call_1", "approve")], duplicates_checked=every_duplicate(usd_refund)
    )
    client.force_login(make_user("ada", roles.AUDITORS))
    event = decision.audit_events.first()

    pages = [
        reverse("audit:list"),
        reverse("audit:event", args=[event.sequence]),
        reverse("audit:decision", args=[decision.pk]),
        reverse("audit:hold-timeline", args=[usd_refund.pk]),
    ]

    for url in pages:
        assert "runs/r%2F7%20%231" in client.get(url).content.decode(), url


@pytest.mark.parametrize(
    "template",
    [
        "https://agentos.example.com/runs/{run_id}/{host}",  # an unknown placeholder
        "https://agentos.example.com/runs/{run_id!r}",  # a conversion
        "https://agentos.example.com/runs/{run_id:>9}",  # a format spec
        "https://agentos.example.com/runs/{}",
        "https://agentos.example.com/runs/{run_id",
        "https://agentos.example.com/envs/{env}",  # no run id
        "javascript:alert(1)//{run_id}",
        "ftp://agentos.example.com/{run_id}",
    ],
)
def test_a_malformed_run_url_template_stops_start_up(template, tmp_path):
    started = start_django(RUN_URL_TEMPLATE=template, REVIEWQUEUE_VAR_DIR=str(tmp_path))

    assert started.returncode != 0
    assert "RUN_URL_TEMPLATE" in started.stderr.splitlines()[-1]


def test_a_run_url_template_with_the_env_in_the_host_is_accepted(tmp_path):
    code = "from django.conf import settings as s; print(s.RUN_URL_TEMPLATE)"

    started = start_django(
        code, RUN_URL_TEMPLATE="https://{env}.agentos.example.com/runs/{run_id}", REVIEWQUEUE_VAR_DIR=str(tmp_path)
    )

    assert started.stdout.strip() == "https://{env}.agentos.example.com/runs/{run_id}", started.stderr


# After the decision


@pytest.fixture
def no_undo_window(settings):
    settings.UNDO_SECONDS = 0  # these decisions are delivered at once; the undo window has its own tests


def test_the_status_lists_what_was_sent_and_reloads_the_run_once_applied(
    alice_client, samples, platform_client, no_undo_window
):
    hold = samples["h_13"]
    confirm(alice_client, hold, **{field_name(hold, 1, "amount"): "100.00", "item-1-comment": "partial refund"})
    decision = Decision.objects.get(hold=hold)
    status = reverse("decision-status", args=[hold.pk])

    sending = alice_client.get(status, HTTP_HX_REQUEST="true")
    delivery.deliver(decision.pk, platform_client)
    applied = alice_client.get(status, HTTP_HX_REQUEST="true")

    html = applied.content.decode()
    assert "HX-Trigger" not in sending.headers
    assert applied.headers["HX-Trigger"] == "decision-settled"
    assert '<strong class="action">Approve</strong> <code>toolu_01A9xQ2mZ</code>' in html
    assert '<strong class="action">Approve with edits</strong> <code>toolu_01B7kR4pW</code>' in html
    assert "Refunds 100.00 on order A-1002 (reason: changed mind)" in html
    assert '<span class="untrusted before">129.00</span> → <span class="untrusted after">100.00</span>' in html
    assert 'Comment: <span class="untrusted">partial refund</span>' in html


def test_the_run_panel_shows_the_run_moved_on_after_the_decision(
    alice_client, samples, platform_client, no_undo_window
):
    hold = samples["h_12"]
    run = reverse("run-context", args=[hold.pk])
    before = alice_client.get(run).content.decode()
    confirm(alice_client, hold)
    delivery.deliver(Decision.objects.get(hold=hold).pk, platform_client)

    after = alice_client.get(run).content.decode()  # the snapshot is seconds old, but older than the decision

    assert '<dd id="run-status">held</dd>' in before
    assert '<dd id="run-status">completed</dd>' in after


def test_the_countdown_stops_once_decided(alice_client, samples):
    hold = samples["h_12"]
    before = alice_client.get(reverse("hold", args=[hold.pk])).content.decode()

    confirm(alice_client, hold)
    after = alice_client.get(reverse("hold", args=[hold.pk])).content.decode()

    assert 'class="countdown"' in before and "Decided" not in before
    assert 'class="countdown"' not in after and '<strong class="decided">Decided</strong>' in after


# One word for the edit


def test_the_form_and_summary_say_approve_with_edits(alice_client, samples):
    hold = samples["h_14"]
    url = reverse("hold-review", args=[hold.pk])
    edited = {
        "item-0-action": "approve",
        field_name(hold, 0, "amount"): "20",
        field_name(hold, 0, "order_id"): "A-1001",
    }

    form = alice_client.get(reverse("hold", args=[hold.pk])).content.decode()
    summary = alice_client.post(url, edited).content.decode()
    back = alice_client.post(url, {**edited, "back": "yes"}).content.decode()

    assert "<span data-approve-word>Approve</span>" in form
    assert '<strong class="action">Approve with edits</strong>' in summary
    assert "Refunds 20.00 on order A-1001" in summary
    assert "<span data-approve-word>Approve with edits</span>" in back
    assert "EDIT" not in summary and "(with your edits)" not in form


def test_the_audit_says_approve_with_edits(auditor_client, samples, alice, platform_client):
    choices = [
        ItemChoice("toolu_01A9xQ2mZ", "approve"),
        ItemChoice("toolu_01B7kR4pW", "edit", {"order_id": "A-1002", "amount": "100.00", "reason": "changed mind"}),
    ]
    decision = decisions.submit(samples["h_13"], alice, choices, duplicates_checked=every_duplicate(samples["h_13"]))

    listing = auditor_client.get(reverse("audit:list") + "?kind=decision_submitted").content.decode()
    page = auditor_client.get(reverse("audit:decision", args=[decision.pk])).content.decode()
    exported = b"".join(auditor_client.get(reverse("audit:export") + "?kind=decision_submitted").streaming_content)
    row = next(csv.DictReader(io.StringIO(exported.decode())))

    assert "Approve, Approve with edits" in listing
    assert "Approve toolu_01A9xQ2mZ, Approve with edits toolu_01B7kR4pW" in listing
    assert '<option value="edit">Approve with edits</option>' in listing
    assert '<strong class="action">Approve with edits</strong>' in page
    assert row["summary"] == (  # h_13 is an A-1001 refund: the audit says the reviewer checked the others
        "Approve toolu_01A9xQ2mZ, Approve with edits toolu_01B7kR4pW, possible duplicate of h_12, h_14, h_15 checked"
    )
    assert row["actions"] == "approve edit"  # the codes the action filter takes
