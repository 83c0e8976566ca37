"""What a process keeps for itself, registered in one place so that one call forgets all of it.

Two kinds: a function whose answer is made once a process (``@cached``, ``functools``' cache, registered), and a
keeper of its own (the approval policies' copy, the cache's process copy) that registers the function forgetting
it (``register``). Nothing in the app forgets: a process keeps these until it ends, each named where it lives for
why that is safe. The tests call ``forget_all`` before each test, as each starts on its own database and cache.

A third kind depends on neither: what is read from the process's environment alone (files, variables), such as
the TLS trust store (``@kept_for_the_process``). ``forget_all`` leaves it, since no database or cache changes
it; a test that changes the environment it was read from forgets it with the function's ``cache_clear``.
``tests/architecture/test_process_state.py`` checks that the app's modules cache through here only.
"""

import functools
from collections.abc import Callable

_forgetters: list[Callable[[], None]] = []


def register(forget: Callable[[], None]) -> Callable[[], None]:
    """Have ``forget_all`` call ``forget``, which drops what its module keeps for the process."""
    _forgetters.append(forget)
    return forget


def cached(function: Callable | None = None, *, maxsize: int | None = None):
    """``functools.lru_cache`` (unbounded unless ``maxsize``), registered: ``@cached`` or ``@cached(maxsize=…)``."""

    def decorate(function: Callable) -> Callable:
        kept = functools.lru_cache(maxsize=maxsize)(function)
        register(kept.cache_clear)
        return kept

    return decorate(function) if function is not None else decorate


def kept_for_the_process(function: Callable) -> Callable:
    """``functools.cache`` for an answer read from the process's environment alone: ``forget_all`` leaves it."""
    return functools.cache(function)


def forget_all() -> None:
    """Forget everything every process-level cache keeps: the next call of each makes it anew."""
    for forget in _forgetters:
        forget()
