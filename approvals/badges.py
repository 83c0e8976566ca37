"""The queue's approval badges: how many approvals each listed hold needs, how many its open round has, and why.

The queue must not pay a query per row, nor read every hold's items on every request. A
hold's requirement depends only on its content (env, agent, capability, items' data: all
named by its ``payload_digest``) and on the policies (named by ``policies.version``), so it
is cached under those: a page reads the requirements of its holds in one round trip and
works out only the ones it has not seen, from their items' data, in one query. The open
round's size comes with the page's own query (``rounds.open_round_size``).

A hold whose policy needs 0 people says when the policy approves it, or why it waits for
people after all (``alone.waiting_words``): the day's tallies of those policies
cost the page one query more, and only when it lists such a hold. A hold waiting past its
policy's target (``decide_within_minutes``, from the agent's ask) says so (``late_words``).

With a policy on a subject's total (``approvals.subject_totals``), a requirement depends on other holds' approvals
too: the page reads its holds' subject totals (``subject_totals.read_many``) and names them in the cache key, with
the day, so an approval elsewhere is seen at once, and one leaving the window by the next day at the latest (only
ever asking more people meanwhile).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import defaultdict
from collections.abc import Collection
from datetime import datetime, timedelta
from decimal import Decimal

from django.utils import timezone

from approvals import alone, chains, policies, rounds, subject_totals
from holds.models import Hold, HoldItem
from reviewqueue import softcache

REQUIREMENT_SECONDS = 24 * 3600  # one nobody asks for again (its hold decided, say) leaves the cache within a day


@dataclasses.dataclass(frozen=True)
class Badge:
    """What a queue row says of a hold's approvals: ``words`` ("1 of 2 approvals") and ``why`` ("amount 1,200.00 >
    500")."""

    words: str
    why: str


def badges(listed: list, possible_duplicates: Collection[int] = ()) -> dict[int, Badge]:
    """The badge of each listed hold that needs more than one approval or has an open round, by pk.

    ``listed`` are the queue's ``holds.queue.listing.Listed`` holds: pk, env, agent, capability,
    payload digest and the open round's size; ``possible_duplicates`` the pks of those flagged as possible
    duplicates (``holds.related.duplicates.flagged``), which no policy approves by itself.
    """
    version = policies.version()
    current = policies.all_policies(version)
    required = _requirements(listed, current, version) if current else {}
    by_key = {policies.key(policy): policy for policy in current}
    deciding_alone = {found[2] for found in required.values() if found[0] == 0 and found[2] in by_key}
    now = timezone.now()
    tallies = alone.tallies_today([by_key[one] for one in deciding_alone], now) if deciding_alone else {}
    chained, opened = _chains(listed, required, by_key)
    found = {}
    for hold in listed:
        count, why, policy_key, total, doubt, actions = required.get(hold.pk, (1, "", None, None, "", []))
        if count == 0 and policy_key in by_key and not hold.open_approvals:
            tally = tallies.get(policy_key, policies.DayTally())
            need = policies.Requirement(by_key[policy_key], count, why, Decimal(total) if total else None, doubt)
            approvable, duplicate = "approve" in actions, hold.pk in possible_duplicates
            words = alone.waiting_words(need, hold, now, tally, approvable=approvable, possible_duplicate=duplicate)
            found[hold.pk] = Badge(*words)
        elif hold.pk in chained:
            found[hold.pk] = Badge(chained[hold.pk], why)
        elif words := chains.count_words(count, hold.open_approvals):
            found[hold.pk] = Badge(words, why)
        if late := late_words(by_key.get(policy_key), hold, now, opened.get(hold.pk)):
            shown = found.get(hold.pk)
            found[hold.pk] = Badge(f"{shown.words} · {late}", shown.why) if shown else Badge(late, "")
    return found


def _chains(listed: list, required: dict, by_key: dict) -> tuple[dict[int, str], dict[int, datetime]]:
    """ "Stage 2 of 3 · Finance · 1 of 2" of each listed hold whose policy has stages of its own, by pk, and when the
    stage it waits for opened, for those past their first: the open rounds' stages read in one query, and the members
    of the groups a stage asks everyone of in one more."""
    chained = {key: chains.stages_of(policy) for key, policy in by_key.items() if chains.is_chain(policy)}
    key_of = {}
    for hold in listed:
        count, policy_key = required.get(hold.pk, (1, "", None))[:3:2]
        if policy_key in chained and count == by_key[policy_key].approvals_required:
            key_of[hold.pk] = policy_key
    if not key_of:
        return {}, {}
    under_way = rounds.open_rounds_of([hold.pk for hold in listed if hold.pk in key_of and hold.open_approvals])
    used = {key: chained[key] for key in key_of.values()}
    members = chains.everyone_members(set().union(*(chains.everyone_groups(stages) for stages in used.values())))
    # A chain nobody approved yet reads the same on every row of its policy: worked out once.
    untouched = {key: chains.badge_words(chains.progress(stages, [], members)) for key, stages in used.items()}
    words, opened = {}, {}
    for pk, key in key_of.items():
        if pk not in under_way:
            words[pk] = untouched[key]
            continue
        states = chains.progress(chained[key], under_way[pk], members)
        words[pk] = chains.badge_words(states)
        waiting = chains.waiting(states)
        if waiting and waiting[0].stage.step > 1:
            opened[pk] = chains.opened_at(states, waiting[0], None)
    return words, opened


def late_words(policy, hold, now, stage_opened=None) -> str:
    """ "Past its 30 min target" once ``hold`` waited longer since the agent's ask (or since the stage of its chain
    waiting now opened: ``stage_opened``) than its ``policy``'s target (``decide_within_minutes``); "" before, or
    without a target."""
    minutes = policy.decide_within_minutes if policy is not None else None
    if not minutes or (stage_opened or hold.created_at) + timedelta(minutes=minutes) > now:
        return ""
    return f"Past its {minutes} min target" + (" for this stage" if stage_opened else "")


def _requirements(listed: list, current: list, version: str) -> dict[int, tuple]:
    """(approvals required, why, the policy's ``policies.key``, its ``sure_total`` as text, its ``doubt``, the hold's
    actions) of each listed hold under the policies of ``version``, read from the cache or worked out and stored."""
    totals = subject_totals.read_many(listed, current) if subject_totals.days_asked(current) else None
    keys = {_key(version, hold, _totals_key(totals, hold.pk)): hold for hold in listed}
    # Not kept in the process: should a policy change fail to move the version on (the cache down at the commit),
    # requirements stored under it meanwhile could be wrong, and they must leave with the cache's timeout.
    found = softcache.get_many(list(keys), "the holds' approval requirements")
    missing = {key: hold for key, hold in keys.items() if key not in found}
    if missing:
        item_data = defaultdict(list)
        items = HoldItem.objects.filter(hold__in=[hold.pk for hold in missing.values()]).order_by("hold", "position")
        for hold_pk, data in items.values_list("hold", "data"):
            item_data[hold_pk].append(data)
        actions = dict(Hold.objects.filter(pk__in=[hold.pk for hold in missing.values()]).values_list("pk", "actions"))
        fresh = {}
        for key, hold in missing.items():
            given = None if totals is None else totals.get(hold.pk)
            need = policies.requirement(hold, current, item_data[hold.pk], subject_totals=given)
            total = None if need is None or need.sure_total is None else str(need.sure_total)
            fresh[key] = (
                (
                    need.approvals_required,
                    need.why,
                    policies.key(need.policy),
                    total,
                    need.doubt,
                    actions.get(hold.pk, []),
                )
                if need
                else (1, "", None, None, "", [])
            )
        softcache.set_many(fresh, REQUIREMENT_SECONDS, "the holds' approval requirements")
        found |= fresh
    return {hold.pk: found[key] for key, hold in keys.items()}


def _totals_key(totals, pk: int) -> tuple:
    """What of a hold's subject totals its requirement depends on, for the cache key (the day included)."""
    if totals is None or not totals.get(pk):
        return ()
    found = totals[pk]
    day = next(iter(found.values())).read_at.date()
    return (day, *((value, total.own, total.approved) for value, total in sorted(found.items())))


def _key(version: str, hold, totals: tuple = ()) -> str:
    parts = (version, hold.pk, hold.env, hold.agent, hold.capability, hold.payload_digest, totals)
    return "approval-requirement-4:" + hashlib.sha256(repr(parts).encode()).hexdigest()
