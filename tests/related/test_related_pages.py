"""The queue and the hold page show a hold's possible duplicates and related holds, as text, to whoever may see
them; the sample refunds of order A-1001 (h_12..h_15) show it at once."""

import pytest
from django.urls import reverse

from holds.mirror import sync
from holds.models import Hold
from tests.helpers.users import make_user, scoped_group

pytestmark = pytest.mark.django_db

A_1001 = ("h_12", "h_13", "h_14", "h_15")


def row_of(page: str, hold: Hold) -> str:
    start = page.index(f'id="row-{hold.pk}"')
    return page[start : page.index("</tr>", start)]


def test_each_a_1001_refund_says_possible_duplicate_in_the_queue_naming_another(samples, alice_client):
    page = alice_client.get(reverse("queue")).content.decode()

    for hold_id in A_1001:
        row = row_of(page, samples[hold_id])
        assert "Possible duplicate" in row, hold_id
        assert any(f"of {other}" in row for other in A_1001 if other != hold_id), row
    assert "Possible duplicate" not in row_of(page, samples["h_17"])


def test_the_queue_filters_possible_duplicates(samples, alice_client):
    page = alice_client.get(reverse("queue"), {"duplicates": "possible"}).content.decode()

    shown = {hold_id for hold_id, hold in samples.items() if f'id="row-{hold.pk}"' in page}
    assert shown == set(A_1001)
    assert 'option value="possible" selected' in page
    assert alice_client.get(reverse("queue"), {"duplicates": "<script>"}).status_code == 400


def test_the_hold_page_names_the_other_three_and_what_was_approved_already(
    samples, alice_client, platform_state, platform_client
):
    platform_state.decide_elsewhere("default", "h_14", "bob")
    sync.sync_env(platform_client, "default")

    page = alice_client.get(reverse("hold", args=[samples["h_15"].pk])).content.decode()

    related = page[page.index('id="related-holds"') :]
    assert page.index('id="related-holds"') < page.index('id="decide-form"')
    heading = related[: related.index("</h2>")]
    assert all(other in heading for other in ("h_12", "h_13", "h_14")) and "Possible duplicate of" in heading
    assert "49.90 already approved on A-1001, by bob, <time" in related
    assert "Decided by bob" in related and "llamaindex-support" in related


def test_agent_text_in_related_holds_is_shown_as_text(platform_client, platform_state, alice_client):
    for hold_id in ("h_a", "h_b"):
        platform_state.add_hold(
            "default",
            {
                "hold_id": hold_id,
                "agent": "support-agno",
                "items": [
                    {"id": "call_1", "title": "<img src=x onerror=alert(1)>", "data": {"order_id": "<b>A-1</b>"}}
                ],
            },
        )
    sync.sync_env(platform_client, "default")

    page = alice_client.get(reverse("hold", args=[Hold.objects.get(hold_id="h_a").pk])).content.decode()

    assert "h_b" in page[page.index('id="related-holds"') :]
    assert "<img src=x" not in page and "<b>A-1</b>" not in page
    assert "&lt;b&gt;A-1&lt;/b&gt;" in page


def test_a_reviewer_sees_only_related_holds_in_their_scopes(samples, client):
    carol = make_user("carol", "Reviewers")
    carol.groups.add(scoped_group("agno-and-openai", agent="support-[ao]*"))
    client.force_login(carol)

    page = client.get(reverse("hold", args=[samples["h_15"].pk])).content.decode()
    queue = client.get(reverse("queue")).content.decode()

    related = page[page.index('id="related-holds"') :]
    assert "h_14" in related and "h_12" not in related and "h_13" not in related
    assert "of h_14" in row_of(queue, samples["h_15"]) and "h_12" not in row_of(queue, samples["h_15"])
