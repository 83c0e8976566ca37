from api import problems

API_PATH = "/api/"


class ProblemDocumentsMiddleware:
    """Every error answer under ``/api/`` as a problem document, whoever answered it.

    The API's own operations answer problems already; this rewrites the rest: Django's 404 for a
    path no operation has, django-ninja's 405, the plain 400 of ``reviewqueue.input_guard``, a 500.
    Near the top of the stack, so it sees the answers of the middleware below it too.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            not request.path_info.startswith(API_PATH)
            or response.status_code < 400
            or response.get("Content-Type", "").startswith(problems.MEDIA_TYPE)
        ):
            return response
        kept = {name: response[name] for name in problems.KEPT_HEADERS if name in response}
        rewritten = problems.of_status(response.status_code, _plain_detail(response)).response(request.path)
        for name, value in kept.items():
            rewritten[name] = value
        return rewritten


def _plain_detail(response) -> str:
    """The answer's own words when it was short plain text (input_guard's reason), else none."""
    if getattr(response, "streaming", False) or not response.get("Content-Type", "").startswith("text/plain"):
        return ""
    text = response.content.decode("utf-8", "replace").strip()
    return text if len(text) <= 300 else ""
