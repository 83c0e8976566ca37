"""One tap from an email or a chat message: every way of misusing a link (replayed, forwarded, tampered, expired,
out of scope, overtaken) sends nothing and says why."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from holds.deciding import decisions
from holds.links import action_links
from holds.models import ActionLinkUse, Decision, Hold
from tests.helpers.action_links import SITE, path_of, posted, sent_decisions, signed_in
from tests.helpers.approval_history import raise_on_the_platform
from tests.helpers.duplicates import every_duplicate
from tests.helpers.users import scoped_group


@pytest.mark.django_db
def test_a_replayed_link_says_who_decided_and_when_and_sends_nothing(samples, alice, bob, settings):
    settings.SITE_URL = SITE
    hold = samples["h_17"]
    chat_link = path_of(action_links.links_for(hold).approve)
    posted(signed_in(alice), chat_link)

    bobs_replay = signed_in(bob).post(chat_link, {"round": "0"})
    alices_replay = signed_in(alice).post(chat_link, {"round": "0"})

    assert bobs_replay.status_code == 409
    assert "This link was used already: Alice Adams sent its decision with it at" in bobs_replay.content.decode()
    assert alices_replay.status_code == 200 and 'id="decision-status"' in alices_replay.content.decode()
    assert len(sent_decisions(hold)) == 1 and ActionLinkUse.objects.count() == 1


@pytest.mark.django_db
def test_someone_without_the_reviewer_role_learns_nothing_from_a_used_link(samples, alice, audrey, settings):
    settings.SITE_URL = SITE
    chat_link = path_of(action_links.links_for(samples["h_17"]).reject)
    posted(signed_in(alice), chat_link)

    opened = signed_in(audrey).get(chat_link)

    assert opened.status_code == 403 and "Alice" not in opened.content.decode()


@pytest.mark.django_db
def test_a_forwarded_email_link_reveals_nothing_and_sends_nothing(samples, alice, bob, settings):
    settings.SITE_URL = SITE
    hold = samples["h_17"]
    alices = path_of(action_links.links_for(hold, alice).approve)

    opened = signed_in(bob).get(alices)
    sent = signed_in(bob).post(alices, {"round": "0"})

    page = opened.content.decode()
    assert opened.status_code == sent.status_code == 403
    assert "This link was sent to someone else" in page
    assert hold.question[:20] not in page and f"/holds/{hold.pk}/" not in page
    assert not sent_decisions(hold)


@pytest.mark.django_db
@pytest.mark.parametrize("change", ["one character", "cut short", "another salt", "garbage", "forged payload"])
def test_a_tampered_link_gives_a_clear_page_never_a_500(samples, alice, settings, change):
    token = action_links.make(samples["h_17"], "approve", alice)
    from django.core import signing

    tampered = {
        "one character": token[:-3] + ("A" if token[-3] != "A" else "B") + token[-2:],
        "cut short": token[: len(token) // 2],
        "another salt": signing.dumps(
            signing.loads(token, salt=action_links.SALT), salt="holds.deciding.review.summary"
        ),
        "garbage": "%00..%2F" * 3,
        "forged payload": signing.dumps(
            {"t": "x", "h": samples["h_17"].pk, "a": "edit", "d": "", "r": alice.pk, "c": "email_link", "x": 2**40},
            salt=action_links.SALT,
        ),
    }[change]
    client = signed_in(alice)

    opened = client.get(reverse("action-link", args=[tampered]) if "/" not in tampered else f"/links/{tampered}")
    sent = client.post(reverse("action-link", args=[tampered]) if "/" not in tampered else f"/links/{tampered}")

    assert opened.status_code in (400, 404) and sent.status_code in (400, 404)
    if opened.status_code == 400:
        assert "This link is not one Review Queue made" in opened.content.decode()
    assert not Decision.objects.exists()


@pytest.mark.django_db
def test_a_send_that_names_no_round_of_approvals_is_a_400(samples, alice):
    link = reverse("action-link", args=[action_links.make(samples["h_17"], "approve", alice)])

    sent = signed_in(alice).post(link)

    assert sent.status_code == 400 and not Decision.objects.exists() and not ActionLinkUse.objects.exists()


@pytest.mark.django_db
def test_an_expired_link_gives_a_clear_page_and_a_link_expires_with_its_hold(
    samples, alice, platform_state, platform_client
):
    hold = samples["h_17"]
    a_day_ago = timezone.now() - timedelta(hours=25)
    stale = action_links.make(hold, "approve", alice, now=a_day_ago)
    soon = timezone.now() + timedelta(minutes=5)
    Hold.objects.filter(pk=hold.pk).update(expires_at=soon)
    hold.refresh_from_db()

    sent = signed_in(alice).post(reverse("action-link", args=[stale]), {"round": "0"})

    assert sent.status_code == 410 and "This link expired at" in sent.content.decode()
    assert action_links.read(stale).expires_at.timestamp() == int((a_day_ago + action_links.LIFETIME).timestamp())
    assert action_links.read(action_links.make(hold, "approve", alice)).expires_at.timestamp() == int(soon.timestamp())
    assert not Decision.objects.exists()


@pytest.mark.django_db
def test_out_of_the_recipients_team_scopes_the_link_is_a_404(samples, alice):
    hold = samples["h_17"]
    link = reverse("action-link", args=[action_links.make(hold, "approve", alice)])
    alice.groups.add(scoped_group("Billing", agent="billing-*"))  # the scopes changed since the message

    assert signed_in(alice).get(link).status_code == 404
    assert signed_in(alice).post(link, {"round": "0"}).status_code == 404
    assert not Decision.objects.exists()


@pytest.mark.django_db
def test_a_hold_decided_elsewhere_meanwhile_is_said_so(samples, alice, bob):
    hold = samples["h_17"]
    link = reverse("action-link", args=[action_links.make(hold, "reject", alice)])
    decisions.submit(hold, bob, [decisions.ItemChoice("A-1004", "approve")], duplicates_checked=every_duplicate(hold))

    sent = signed_in(alice).post(link, {"round": "0"})

    assert sent.status_code == 409 and "Decided by Bob Brown at" in sent.content.decode()
    assert [d.reviewer for d in sent_decisions(hold)] == [bob]


@pytest.mark.django_db
def test_a_hold_changed_on_the_platform_since_the_message_offers_the_hold_page(
    alice,
    refund,
    platform_state,
    platform_client,
):
    link = reverse("action-link", args=[action_links.make(refund, "approve", alice)])
    raise_on_the_platform(platform_state, platform_client, refund, "5000.00")

    sent = signed_in(alice).post(link, {"round": "0"})

    page = sent.content.decode()
    assert sent.status_code == 409 and "changed on the platform since this message was sent" in page
    assert f'href="/holds/{refund.pk}/"' in page
    assert not Decision.objects.exists()
