"""The scenario's people and rules, written into one stack's database: ``python -m bench.capacity.seed COUNTS``.

Run by ``bench.capacity`` once the stack's first sync has mirrored the platform's holds, with the stack's
``DATABASE_URL`` and ``SECRET_KEY`` (sessions and Slack buttons are signed with it), from this checkout whichever
checkout the stack serves. Prints one JSON object: each person's session cookie (made here, as a sign-in would
leave it: signing in hundreds of people through the password hasher would measure the hasher), the API scripts'
tokens, Slack buttons ready to press, and the open holds each kind of user decides, kept apart so that two
simulated people never race for one hold (a race ends in a refusal, which is not what is measured).
"""

import json
import sys
from datetime import timedelta

POLICY_AGENT = "llamaindex-support"  # the agent whose small refunds the 0-people policy approves


def seed(reviewers: int, auditors: int, scripts: int, slack_buttons: int) -> dict:
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import Group, User
    from django.contrib.sessions.backends.db import SessionStore
    from django.db.models import F
    from django.utils import timezone

    from api import tokens
    from approvals.models import ApprovalPolicy
    from holds.links import action_links
    from holds.models import DecisionChannel, Hold
    from people import zones
    from reviewqueue import roles
    from slackapp.models import SlackAccount
    from tests.helpers import fake_slack

    def person(username: str, group: str) -> User:
        user = User.objects.create(username=username, email=f"{username}@example.com", password="!")
        user.groups.add(Group.objects.get_or_create(name=group)[0])
        return user

    def session_of(user: User) -> str:
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"  # as a password sign-in leaves it
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session[zones.SESSION_KEY] = zones.zone_name_of(user)  # as signing in leaves it: no query for it a page
        session.create()
        return session.session_key

    now = timezone.now()
    people = {"reviewers": [], "auditors": [], "scripts": []}
    for number in range(reviewers):
        user = person(f"capacity-reviewer-{number}", roles.REVIEWERS)
        slack_user = f"U0CAP{number}"
        SlackAccount.objects.create(
            team_id=fake_slack.TEAM, slack_user_id=slack_user, user=user, linked_at=now, proof="email"
        )
        people["reviewers"].append({"session": session_of(user), "slack_user": slack_user})
    for number in range(auditors):
        people["auditors"].append({"session": session_of(person(f"capacity-auditor-{number}", roles.AUDITORS))})
    for number in range(scripts):
        user = person(f"capacity-script-{number}", roles.REVIEWERS)
        people["scripts"].append({"token": tokens.create(user, "capacity", list(tokens.SCOPES), 1)[1]})
    # A 0-people policy: the small refunds of one agent are approved by themselves, as a team sets one up.
    ApprovalPolicy.objects.create(
        name="capacity: small refunds alone",
        agent_pattern=POLICY_AGENT,
        condition_key="amount",
        condition_operator=ApprovalPolicy.Operator.AT_MOST,
        condition_threshold=150,
        approvals_required=0,
    )
    # Holds that stay open through the run, in the queue's order (expiry first): people work from the top of the
    # queue, so what they decide is what the others' queues show. The policy's are left to it.
    open_holds = list(
        Hold.objects.filter(status=Hold.Status.OPEN, decisions__isnull=True)
        .exclude(expires_at__lt=now + timedelta(hours=1))
        .exclude(agent=POLICY_AGENT)
        .order_by(F("expires_at").asc(nulls_last=True), "pk")
    )
    buttons, rest = open_holds[:slack_buttons], open_holds[slack_buttons:]
    return {
        **people,
        "slack": [action_links.make(hold, "approve", channel=DecisionChannel.SLACK) for hold in buttons],
        "scripts_holds": [hold.pk for hold in rest[0::4]],
        "reviewers_holds": [hold.pk for number, hold in enumerate(rest) if number % 4],
        "highest_hold": max((hold.pk for hold in open_holds), default=0),
    }


def main() -> None:
    import django

    django.setup()
    reviewers, auditors, scripts, slack_buttons = (int(count) for count in sys.argv[1:5])
    json.dump(seed(reviewers, auditors, scripts, slack_buttons), sys.stdout)


if __name__ == "__main__":
    main()
