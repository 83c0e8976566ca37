"""A plain 400, never a 500, for a request value that the database would refuse or a reader turned down."""

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest

from reviewqueue import readers


class HostileInputMiddleware:
    """Answer 400 to a NUL (or an unpaired surrogate) anywhere in the path, query string or form.

    PostgreSQL refuses NUL in any text, and Django hands some values to queries unchanged:
    the admin's list filters and search, autocomplete's ``term``. Refusing such a value here,
    before any view runs, covers them all. The views' own readers then check each value's kind;
    the ``readers.BadValue`` they raise becomes the same plain 400.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _unstorable_address(request):
            return bad_request(REFUSAL)
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view, view_args, view_kwargs) -> HttpResponse | None:
        # The first view hook of the stack (this middleware comes before CSRF's), so before any code reads the form.
        if not getattr(view, "signature_first", False) and _unstorable_form(request):
            return bad_request(REFUSAL)
        return None

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, readers.BadValue):
            return bad_request(f"Bad value for {exception}.")
        return None


REFUSAL = "NUL characters and unpaired surrogates are not allowed in a request."


def signature_first(proven: Callable[[HttpRequest], HttpResponse | None]):
    """For a view whose requests prove themselves by a signature over their raw body (Slack's request URL): ``proven``
    runs before the form is checked or read, and answers (401, 404) for a request it does not accept; the form's
    check for unstorable text follows it. So an unsigned request is answered as unsigned, whatever its body holds."""

    def decorate(view):
        @wraps(view)
        def checked(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            refused = proven(request)
            if refused is not None:
                return refused
            if _unstorable_form(request):
                return bad_request(REFUSAL)
            return view(request, *args, **kwargs)

        checked.signature_first = True
        return checked

    return decorate


def _unstorable_address(request: HttpRequest) -> bool:
    return _unstorable(request.GET, request.path_info)


def _unstorable_form(request: HttpRequest) -> bool:
    return _unstorable(request.POST)


def _unstorable(data, *also: str) -> bool:
    """Whether a key or value of ``data`` (a ``QueryDict``), or any of ``also``, holds text the database refuses."""
    values = list(also)
    for key, listed in data.lists():
        values += [key, *listed]
    return any(readers.UNSTORABLE.search(value) for value in values)


def bad_request(message: str) -> HttpResponse:
    return HttpResponseBadRequest(message + "\n", content_type="text/plain; charset=utf-8")
