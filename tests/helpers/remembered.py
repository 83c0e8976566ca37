"""What the remembered approvals' tests do: add a refund hold, remember one through the summary, run the sweep
that approves what is due at a moment."""

import time_machine

from approvals.models import RememberedApproval
from holds.deciding import by_policy
from holds.mirror import sync
from holds.models import Hold
from tests.helpers.approvals_setup import signed_in
from tests.helpers.reviewing import review_form, send, summary_of


def add_refund(platform_client, platform_state, hold_id, amount, agent="refund-bot", env="default", **fields) -> Hold:
    platform_state.add_hold(
        env,
        {
            "hold_id": hold_id,
            "agent": agent,
            "capability": "refund",
            # Each hold on an order of its own: two refunds of one order are possible duplicates.
            "items": [
                {"id": f"A-{hold_id}", "title": "refund", "data": {"order_id": f"A-{hold_id}", "amount": amount}}
            ],
            **fields,
        },
    )
    sync.sync_env(platform_client, env)
    return Hold.objects.get(env=env, hold_id=hold_id)


def remember_through_summary(client, hold, duration="hour"):
    """Approve ``hold`` as it is from its summary, choosing to remember it for ``duration``."""
    fields = summary_of(client, hold, review_form(hold))
    assert fields["remember"] == [""]  # "Don't remember" is what the summary starts with
    return send(client, hold, {**fields, "remember": duration})


def approve_due_at(moment):
    with time_machine.travel(moment, tick=False):
        return by_policy.approve_due()


def remembered(alice, first, allowed, hours=1) -> RememberedApproval:
    response = remember_through_summary(signed_in(alice), first)
    assert response.status_code == 302, response.content.decode()[:2000]
    return RememberedApproval.objects.get(owner=alice)
