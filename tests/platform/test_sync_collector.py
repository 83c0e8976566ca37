"""A whole walk pauses Python's cyclic garbage collector while it writes its batches (``reviewqueue.collector``),
frees the cycles left meanwhile every few batches, and leaves the collector as it found it, even when it fails."""

import gc
import weakref

import pytest

from holds.mirror import platform, sync, writing
from holds.models import Hold
from reviewqueue import collector


class _Cycle:
    """An object in a reference cycle: only the collector frees it."""

    def __init__(self) -> None:
        self.itself = self


@pytest.fixture
def batches_of_two(monkeypatch, platform_state):
    """Eight open holds, listed two a page and written two a batch: four batches."""
    monkeypatch.setattr(platform, "PAGE_SIZE", 2)
    monkeypatch.setattr(writing, "WRITE_BATCH", 2)
    monkeypatch.setattr(collector, "COLLECT_EVERY", 2)
    for _ in range(8):
        platform_state.add_hold("default", {})


@pytest.mark.django_db
def test_the_collector_is_paused_for_the_batches_frees_their_cycles_every_few_and_runs_again_after(
    platform_client, batches_of_two, monkeypatch
):
    assert gc.isenabled()
    running, cycles, left = [], [], []
    original_store_listed = writing.store_listed

    def store_listed(env, remote, known):
        running.append(gc.isenabled())
        left.append([cycle() is not None for cycle in cycles])  # the earlier batches' cycles not freed yet
        cycles.append(weakref.ref(_Cycle()))  # garbage at once, which reference counting cannot free
        return original_store_listed(env, remote, known)

    monkeypatch.setattr(writing, "store_listed", store_listed)

    result = sync.sync_env(platform_client, "default")

    assert result.created == 8 and Hold.objects.count() == 8
    assert running == [False, False, False, False]
    # Nothing collects while paused but the walk, after every second batch.
    assert left == [[], [True], [False, False], [False, False, True]]
    assert [cycle() for cycle in cycles] == [None, None, None, None]
    assert gc.isenabled()


@pytest.mark.django_db
def test_a_walk_that_fails_leaves_the_collector_running(platform_client, batches_of_two, monkeypatch):
    def store_listed(env, remote, known):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(writing, "store_listed", store_listed)

    with pytest.raises(RuntimeError):
        sync.sync_env(platform_client, "default")

    assert gc.isenabled()


@pytest.mark.django_db
def test_a_walk_leaves_a_collector_paused_by_its_caller_paused(platform_client, batches_of_two):
    gc.disable()
    try:
        sync.sync_env(platform_client, "default")
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert Hold.objects.count() == 8
