"""The API object itself: how it reads a token (``TokenAuth``) and a body (``StrictParser``), how its OpenAPI
document describes errors, the errors each operation may answer, and every error answered as a problem document
(``api.problems``). The operations are in ``api/v1.py``."""

from __future__ import annotations

from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from ninja import Header, NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.parser import Parser
from ninja.security import HttpBearer

from api import idempotency, problems, ratelimit, schemas, tokens
from reviewqueue import readers, showing


class TokenAuth(HttpBearer):
    """The bearer token, read into a ``tokens.Caller``; past its person's rate, or a refused token past its address's
    rate, a 429."""

    def authenticate(self, request, token: str) -> tokens.Caller:
        try:
            caller = tokens.caller_for(token)
        except tokens.Refused as refused:
            ratelimit.check_refused(request)
            raise problems.unauthenticated(refused.message) from None
        ratelimit.check_person(caller.user.pk)
        return caller


class StrictParser(Parser):
    """Every body an operation reads, read by the one strict reader of JSON: nesting deeper than
    ``showing.MAX_NESTING`` levels, NaN, huge numbers or NUL are a 400 before pydantic sees the body."""

    def parse_body(self, request) -> dict:
        try:
            text = request.body.decode("utf-8")
        except UnicodeDecodeError:
            raise readers.BadValue("body", "is not UTF-8 text") from None
        return readers.json_value(text, "body", deepest=showing.MAX_NESTING)


class ReviewQueueAPI(NinjaAPI):
    def get_openapi_schema(self, *args, **kwargs):
        """django-ninja's document, with every error answer described as what it is: a problem document."""
        schema = super().get_openapi_schema(*args, **kwargs)
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                for status, answer in operation.get("responses", {}).items():
                    content = answer.get("content", {})
                    if int(status) >= 400 and "application/json" in content:
                        content[problems.MEDIA_TYPE] = content.pop("application/json")
        return schema


api = ReviewQueueAPI(
    title="Review Queue API",
    version="1",
    description=(
        "Every reviewer and auditor action over HTTP. Send a personal access token (Preferences → API tokens, or "
        "`manage.py createtoken`) as `Authorization: Bearer rq_…`. Errors are RFC 9457 problem documents."
    ),
    urls_namespace="api-v1",
    auth=TokenAuth(),
    parser=StrictParser(),
)

ERRORS = {
    400: schemas.Problem,
    401: schemas.Problem,
    403: schemas.Problem,
    404: schemas.Problem,
    429: schemas.Problem,
    503: schemas.Problem,
}
WRITE_ERRORS = ERRORS | {409: schemas.Problem, 413: schemas.Problem, 422: schemas.Problem}
KEY = Header(
    None,
    alias=idempotency.HEADER,
    description="Any text up to 255 characters: a retry with the same key and body gets the first answer and does "
    "nothing more.",
)


# Errors, each as a problem document


@api.exception_handler(problems.Problem)
def _problem(request, problem: problems.Problem):
    return problem.response(request.path)


@api.exception_handler(readers.BadValue)
def _bad_value(request, bad: readers.BadValue):
    return problems.bad_input([problems.field_error(bad.name, bad.problem)]).response(request.path)


@api.exception_handler(ValidationError)
def _invalid(request, invalid: ValidationError):
    errors = [problems.field_error(_field(error.get("loc", ())), str(error.get("msg", ""))) for error in invalid.errors]
    return problems.bad_input(errors or [problems.field_error("body", "cannot be read")]).response(request.path)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request, error: AuthenticationError):
    return problems.unauthenticated("Send a token as Authorization: Bearer rq_…", invalid=False).response(request.path)


@api.exception_handler(HttpError)
def _http_error(request, error: HttpError):
    # django-ninja answers a body its parser refused as a 400 of its own words; the reader's are kept.
    if isinstance(error.__cause__, readers.BadValue):
        return _bad_value(request, error.__cause__)
    return problems.of_status(error.status_code, str(error)).response(request.path)


@api.exception_handler(RequestDataTooBig)
def _too_large(request, error: RequestDataTooBig):
    return problems.of_status(413, "The body is larger than the API reads.").response(request.path)


@api.exception_handler(Http404)
def _not_found(request, error: Http404):
    return problems.not_found().response(request.path)


def _field(loc) -> str:
    """A pydantic error's location as the request named it: ``sort``, ``items[0].action``."""
    parts = list(loc)[1:]  # the source: query, body, header, path
    if loc and loc[0] == "body" and parts and parts[0] == "payload":
        parts = parts[1:]
    named = ""
    for part in parts:
        named += f"[{part}]" if isinstance(part, int) else (f".{part}" if named else str(part))
    return named or str(loc[0] if loc else "body")
