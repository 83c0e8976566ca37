"""A plain 400, never a 500, for a request value that the database would refuse or a reader turned down."""

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
        if _unstorable(request):
            return bad_request("NUL characters and unpaired surrogates are not allowed in a request.")
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, readers.BadValue):
            return bad_request(f"Bad value for {exception}.")
        return None


def _unstorable(request: HttpRequest) -> bool:
    values = [request.path_info]
    for data in (request.GET, request.POST):
        for key, listed in data.lists():
            values += [key, *listed]
    return any(readers.UNSTORABLE.search(value) for value in values)


def bad_request(message: str) -> HttpResponse:
    return HttpResponseBadRequest(message + "\n", content_type="text/plain; charset=utf-8")
