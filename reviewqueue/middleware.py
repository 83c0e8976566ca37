"""Project-wide middleware: caching of private pages and the session idle timeout."""

import time
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import resolve_url
from django_htmx.http import HttpResponseClientRedirect

from reviewqueue.changes import STREAM_PATH


class PrivateNoStoreMiddleware:
    """Give every response without a Cache-Control of its own ``Cache-Control: private, no-store``.

    Nearly every page and download carries hold or audit data, which must stay out of
    shared and browser caches; marking all of them is the way none is forgotten.
    Static files never get here: WhiteNoise serves them (cacheable) before this runs.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if "Cache-Control" not in response:
            response["Cache-Control"] = "private, no-store"
        return response


class SessionIdleTimeoutMiddleware:
    """Sign out a session that nobody has used for ``SESSION_IDLE_MINUTES``.

    A session expires ``SESSION_COOKIE_AGE`` (the idle time) after it was last saved,
    so noting its use renews it. The note is written at most once per ``note_every_seconds``,
    where ``SESSION_SAVE_EVERY_REQUEST`` would write on every request, and htmx's background
    polls (marked ``X-Poll`` by app.js) and the pages' event streams are not use, so a screen left open times out too.
    A poll that finds its session gone sends the whole page to the sign-in form,
    rather than the form into the polled fragment.
    """

    LAST_USED_KEY = "last_used"

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.user.is_authenticated and not self._background(request):
            now = int(time.time())
            if now - request.session.get(self.LAST_USED_KEY, 0) >= self.note_every_seconds():
                request.session[self.LAST_USED_KEY] = now
        response = self.get_response(request)
        if request.htmx and self._sent_to_sign_in(response):
            page = request.htmx.current_url_abs_path or resolve_url(settings.LOGIN_REDIRECT_URL)
            return HttpResponseClientRedirect(redirect_to_login(page).url)
        return response

    @staticmethod
    def _background(request) -> bool:
        """A poll, or a page's event stream (which cannot send headers of its own): not use of the session."""
        return "X-Poll" in request.headers or request.path == STREAM_PATH

    @staticmethod
    def note_every_seconds() -> float:
        """How long after a note of use the next one is written: a tenth of the idle time, and at most a minute.

        A session in use thus always has nine tenths of its idle time left, so a short
        ``SESSION_IDLE_MINUTES`` never signs out someone at work, and a long one costs a write a minute.
        """
        return min(settings.SESSION_IDLE_MINUTES * 60 / 10, 60)

    @staticmethod
    def _sent_to_sign_in(response) -> bool:
        location = response.get("Location", "")
        return response.status_code == 302 and urlsplit(location).path == resolve_url(settings.LOGIN_URL)
