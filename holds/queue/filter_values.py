"""The queue's filter choices: the (env, agent, capability) of the open holds, written by sync, read for the page.

The values are kept per env and read from the cache under a key naming each env's
``filter_values_version``; a viewer is offered only those of holds in their scopes.
"""

from __future__ import annotations

import hashlib
import uuid

from django.conf import settings
from django.db import transaction

from holds.models import FilterValue, SyncState
from reviewqueue import softcache
from teams import scopes

LONGEST_FILTER_VALUE = 200


def filter_values(viewer, states: list[SyncState] | None = None) -> dict[str, list[str]]:
    """The values the filters offer ``viewer``: those of the open holds at each env's last sync that they
    may see (one small query; see ``scopes.offered_values``).

    Given the envs' ``states`` (see ``sync_states``), the values are read from the cache,
    under a key naming each env's ``filter_values_version``, which sync changes together
    with the values (``replace_filter_values``): the key changes only when they do. It
    names each state's id too, which a database restored or rolled back (as tests do)
    does not give out again, so that values cached for another database are never read.
    """
    return scopes.offered_values(viewer, [scopes.Combination(*row) for row in _filter_combinations(states)])


def _filter_combinations(states: list[SyncState] | None) -> list[tuple[str, str, str]]:
    key = _filter_values_key(states) if states else None
    if key:
        cached = softcache.get_many([key], "the filter choices", content_keyed=True)
        if key in cached:
            return cached[key]
    rows = FilterValue.objects.filter(env__in=settings.AGENTOS_ENVS).order_by()
    combinations = sorted(rows.values_list("env", "agent", "capability"))
    if key:
        softcache.set_many({key: combinations}, FILTER_VALUES_SECONDS, "the filter choices", content_keyed=True)
    return combinations


FILTER_VALUES_SECONDS = 24 * 3600  # values nobody reads again (replaced, say) leave the cache within a day


def _filter_values_key(states: list[SyncState]) -> str:
    versions = sorted((state.env, state.pk, state.filter_values_version) for state in states)
    return (
        "queue-filter-combinations:"
        + hashlib.sha256(repr((sorted(settings.AGENTOS_ENVS), versions)).encode()).hexdigest()
    )


def replace_filter_values(env: str, agents_and_capabilities: set[tuple[str, str]]) -> None:
    """Make the filters offer, for ``env``, exactly these agents with these capabilities (sync's call; writes only
    the difference). A value longer than ``LONGEST_FILTER_VALUE`` is stored blank, so never offered.

    A change also changes the env's ``filter_values_version``, in the same transaction,
    so that no reader can pair the new version with the old values.
    """
    wanted = {(_offerable(agent), _offerable(capability)) for agent, capability in agents_and_capabilities}
    stored = set(FilterValue.objects.filter(env=env).values_list("agent", "capability"))
    if wanted == stored:
        return
    with transaction.atomic():
        for agent, capability in stored - wanted:
            FilterValue.objects.filter(env=env, agent=agent, capability=capability).delete()
        FilterValue.objects.bulk_create(
            [FilterValue(env=env, agent=agent, capability=capability) for agent, capability in sorted(wanted - stored)],
            ignore_conflicts=True,
        )
        SyncState.objects.filter(env=env).update(filter_values_version=str(uuid.uuid4()))


def _offerable(value: str) -> str:
    return value if len(value) <= LONGEST_FILTER_VALUE else ""
