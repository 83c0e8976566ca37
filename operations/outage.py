"""The answer to a request that fails because the database cannot be reached: 503 with a plain page, not 500.

Django hands every uncaught exception to ``handler500`` (``reviewqueue/urls.py``), from a view or
a middleware alike (the session or the user is often the first to need the database). While
PostgreSQL restarts, the connection errors are ``OperationalError`` and ``InterfaceError``; the
page for them is rendered without a request context, so nothing on it reads the database.
Every other error keeps Django's own 500.
"""

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse
from django.template import loader
from django.views import defaults

RETRY_AFTER_SECONDS = 5
UNAVAILABLE_TEMPLATE = "503.html"


def server_error(request):
    """``handler500``: 503 with ``Retry-After`` when the database is unreachable, Django's 500 otherwise."""
    error = sys.exc_info()[1]
    if not database_unreachable(error):
        return defaults.server_error(request)
    response = HttpResponse(loader.get_template(UNAVAILABLE_TEMPLATE).render(), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def database_unreachable(error: BaseException | None) -> bool:
    """The database did not answer: a connection refused, dropped or closed under the query."""
    return isinstance(error, OperationalError | InterfaceError)
