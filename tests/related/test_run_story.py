"""The run's story: a run that asks again after a decision is read as one story on the hold page, the customer's
message first, then what the run asked before and how each ask ended, here and on the platform."""

import re

import pytest
from django.urls import reverse

from holds.deciding import decisions, delivery
from holds.deciding.decisions import ItemChoice
from holds.related import same_run
from reviewqueue import roles
from teams.scopes import viewer_of
from tests.helpers.duplicates import every_duplicate
from tests.helpers.users import add_hold, make_user, scoped_group

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


def run_panel(client, hold) -> str:
    return client.get(reverse("run-context", args=[hold.pk])).content.decode()


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def asked_again(samples, alice, platform_state, platform_client):
    """LlamaIndex's refund run r_41 asked h_12; alice approved it, the platform applied it and the run resumed, then
    asked again (as the guide's code resumes it: one decision, then the next pending refund call)."""
    first = samples["h_12"]
    choices = [ItemChoice(item.item_id, "approve") for item in first.items.all()]
    checked = every_duplicate(first)  # h_13, h_14 and h_15 ask to refund A-1001 too
    delivery.deliver(decisions.submit(first, alice, choices, duplicates_checked=checked).pk, platform_client)
    second = add_hold(
        platform_state,
        platform_client,
        first.agent,
        run_id=first.run_id,
        capability=first.capability,
        question="Refund 49.90 on order A-1001 <b>again</b>?",
        customer_message="The lamp I was sent instead is broken too.",
        items=[{"id": "A-1001", "title": "A-1001 · 49.90", "data": {"order_id": "A-1001", "amount": "49.90"}}],
    )
    return first, second


def test_the_second_ask_of_a_run_shows_the_customers_message_then_the_first_and_how_it_ended(asked_again, alice_client):
    first, second = asked_again

    html = run_panel(alice_client, second)
    text = text_of(html)

    assert text.index("The customer's message") < text.index("Earlier in this run") < text.index("Agent")
    assert "The lamp I was sent instead is broken too." in text
    earlier = text[text.index("Earlier in this run") :]
    assert "Refund 49.90 on order A-1001?" in earlier
    assert "Here: Approve by Alice Adams" in earlier and "Applied by the platform" in earlier
    assert "Platform: Decided, decided by alice@example.com" in earlier
    assert reverse("hold", args=[first.pk]) in html


def test_the_first_ask_has_no_earlier_story_and_the_hold_page_puts_the_run_first(asked_again, alice_client):
    first, second = asked_again

    assert "Earlier in this run" not in run_panel(alice_client, first)
    page = alice_client.get(reverse("hold", args=[first.pk])).content.decode()
    context_column = page[page.index('class="hold-context"') :]
    assert (
        context_column.index('id="run"')
        < context_column.index("Details from the agent")
        < context_column.index('id="notes"')
    )


def test_agent_text_of_earlier_asks_is_shown_as_text(asked_again, alice_client, platform_state, platform_client):
    first, _ = asked_again
    add_hold(
        platform_state,
        platform_client,
        first.agent,
        run_id=first.run_id,
        capability=first.capability,
        question="A third <script>alert(1)</script>",
    )
    fourth = add_hold(platform_state, platform_client, first.agent, run_id=first.run_id, capability=first.capability)

    html = run_panel(alice_client, fourth)

    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;again&lt;/b&gt;" in html


def test_a_long_run_shows_its_latest_asks_and_says_how_many_more(
    samples, alice_client, platform_state, platform_client
):
    first = samples["h_12"]
    for number in range(same_run.MOST_SHOWN + 2):
        add_hold(platform_state, platform_client, first.agent, run_id=first.run_id, question=f"Ask {number}?")
    last = add_hold(platform_state, platform_client, first.agent, run_id=first.run_id, question="The last ask?")

    text = text_of(run_panel(alice_client, last))

    assert "3 earlier holds of this run not shown here" in text
    assert f"Ask {same_run.MOST_SHOWN + 1}?" in text and "Ask 2?" in text and "Ask 1?" not in text


def test_a_viewer_sees_only_the_earlier_asks_in_their_teams(samples, platform_state, platform_client):
    first = samples["h_12"]
    moved = add_hold(platform_state, platform_client, "other-agent", run_id=first.run_id, question="Elsewhere?")
    later = add_hold(platform_state, platform_client, first.agent, run_id=first.run_id, question="Later?")
    scoped = make_user("scoped", roles.REVIEWERS)
    scoped.groups.add(scoped_group("llamaindex only", agent=first.agent))

    shown, left_out = same_run.earlier_in_run(later, viewer_of(scoped))

    assert [one.hold for one in shown] == [first] and left_out == 0
    assert moved not in [one.hold for one in shown]
