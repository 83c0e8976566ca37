"""The cache as a speed-up only: when it does not answer, callers carry on without it (and it is logged).

A value stored under a key that names its content (a digest of everything the value
says, as a queue row's key is) never changes. Callers say so with ``content_keyed``:
such values are also kept in this process, up to ``KEPT_ENTRIES`` of the last used,
and read again without a round trip to the cache. Nothing else is kept here, so a
value whose key stays while its content changes (a version counter) is always read
from the shared cache.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict

from django.core.cache import cache
from django.template.loader import get_template

from reviewqueue import processcache

logger = logging.getLogger(__name__)

KEPT_ENTRIES = 4096  # about eighty pages of queue rows with their filter forms: a few megabytes per process
_kept: OrderedDict[str, object] = OrderedDict()
_kept_lock = threading.Lock()  # a threaded server's requests share the process's values


def get_many(keys: list[str], what: str, *, content_keyed: bool = False) -> dict:
    """The values the cache holds under ``keys``, in one round trip (none for those kept here); none when it is down."""
    found = _recall(keys) if content_keyed else {}
    wanted = [key for key in keys if key not in found]
    if not wanted:
        return found
    try:
        fetched = cache.get_many(wanted)
    except Exception:
        logger.warning("the cache did not answer; computing %s instead", what, exc_info=True)
        return found
    if content_keyed:
        _keep(fetched)
    return found | fetched


def set_many(values: dict, timeout: int | None, what: str, *, content_keyed: bool = False) -> None:
    """Store ``values`` for ``timeout`` seconds, in one round trip (nothing when the cache is down); and keep them in
    the process too, when ``content_keyed``."""
    if content_keyed:
        _keep(values)
    try:
        cache.set_many(values, timeout)
    except Exception:
        logger.warning("the cache did not take %s", what, exc_info=True)


@processcache.register
def forget() -> None:
    """Drop the values kept in this process (tests do, as they start on another database)."""
    with _kept_lock:
        _kept.clear()


def _recall(keys: list[str]) -> dict:
    with _kept_lock:
        found = {key: _kept[key] for key in keys if key in _kept}
        for key in found:
            _kept.move_to_end(key)
    return found


def _keep(values: dict) -> None:
    with _kept_lock:
        _kept.update(values)
        for key in values:
            _kept.move_to_end(key)
        while len(_kept) > KEPT_ENTRIES:
            _kept.popitem(last=False)


@processcache.cached
def template_digest(name: str) -> str:
    """A digest of a template's source, as the loader reads it, made once per process: part of the key of a piece of
    markup cached from it, so that a deploy changing the template reads none of the old pieces."""
    return hashlib.sha256(get_template(name).template.source.encode()).hexdigest()[:16]
