"""The queue's filter form as HTML, rendered once for each set of choices and chosen values, then read from the cache.

The form shows the values each filter offers the reviewer, the values they chose, and
nothing else: its key names both, the orders and expiry windows it offers, the template's
source and ``FORM_VERSION``, so a cached form is never stale.
Rendering it on every page cost a noticeable share of the page's time.
"""

from __future__ import annotations

import dataclasses
import hashlib

from django.template.loader import get_template
from django.urls import reverse
from django.utils.safestring import mark_safe

from holds.queue import listing as holds_queue
from reviewqueue import processcache, softcache

FORM_TEMPLATE = "holds/queue/_filters.html"
FORM_VERSION = 2  # bump with any change to the Python code writing the form's values
FORM_SECONDS = 24 * 3600  # a form nobody asks for again leaves the cache within a day


def form(filters: holds_queue.Filters, choices: dict[str, list[str]]) -> str:
    """The filter form showing ``filters`` chosen among ``choices`` (see ``queue.filter_values``)."""
    key = (
        "queue-filters:"
        + hashlib.sha256(
            repr(
                (
                    FORM_VERSION,
                    softcache.template_digest(FORM_TEMPLATE),
                    _offered(),
                    _queue_url(),
                    choices,
                    dataclasses.astuple(filters),
                )
            ).encode()
        ).hexdigest()
    )
    found = softcache.get_many([key], "the queue's filter form", content_keyed=True)
    if key not in found:
        found[key] = get_template(FORM_TEMPLATE).render(
            {
                "filters": filters,
                "choices": choices,
                "expiring_options": holds_queue.EXPIRING_WITHIN,
                "orders": holds_queue.ORDERS,
            }
        )
        softcache.set_many({key: found[key]}, FORM_SECONDS, "the queue's filter form", content_keyed=True)
    return mark_safe(found[key])  # noqa: S308 -- the template escaped every value


@processcache.cached
def _offered() -> tuple:
    """The orders and expiry windows the form offers, as it shows them."""
    return tuple(holds_queue.EXPIRING_WITHIN), tuple((sort, order.label) for sort, order in holds_queue.ORDERS.items())


@processcache.cached
def _queue_url() -> str:
    return reverse("queue")
