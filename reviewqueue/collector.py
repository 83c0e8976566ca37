"""Python's cyclic garbage collector, paused while bulk work makes and drops objects by the hundred thousand.

A sync parses each batch of a thousand holds into dicts and lists, makes rows of them
and drops them: reference counting frees nearly all of it. Running, the collector would
start every 2,000 new objects and walk each one still alive, again and again, finding
almost no garbage. Paused, it is asked to collect the young objects every
``COLLECT_EVERY`` batches instead, which frees the few cycles left meanwhile (the HTTP
client's, a few dozen objects a page of the listing, holding its response). What that
saves and costs in memory: docs/figures.md, "The sync".
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

COLLECT_EVERY = 5  # batches: what a pause keeps in memory at most is the cycles of so many


class Pause:
    """A pause under way (``paused``): the caller says when each batch of its work is done."""

    def __init__(self) -> None:
        self.batches = 0

    def batch_done(self) -> None:
        """One batch is done: every ``COLLECT_EVERY``, collect the objects made since the pause began or the last
        collection (the two youngest generations, which is where they are while automatic collections are off)."""
        self.batches += 1
        if self.batches % COLLECT_EVERY == 0:
            gc.collect(1)


@contextmanager
def paused() -> Iterator[Pause]:
    """Pause automatic collections for the block, and resume them after unless they were paused already (by the
    caller, or by another thread's block still running: the collector is the process's)."""
    if not gc.isenabled():
        yield Pause()
        return
    gc.disable()
    try:
        yield Pause()
    finally:
        gc.enable()
