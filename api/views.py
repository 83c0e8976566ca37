"""The API tokens page of a person's preferences: their tokens, a new one shown once, and revoking one."""

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from api import tokens
from api.models import ApiToken
from reviewqueue import readers, roles

role_required = roles.required(roles.has_a_role, "API tokens need the Reviewers or Auditors role.")


@role_required
@require_http_methods(["GET", "HEAD", "POST"])
def tokens_page(request):
    """List the person's tokens; a POST creates one (shown on this answer only, never again) or revokes one."""
    offered = tokens.offered_scopes(request.viewer)
    created, errors, status = None, {}, 200
    if request.method == "POST" and "revoke" in request.POST:
        pk = readers.identifier(request.POST.get("revoke", ""), "revoke")
        token = get_object_or_404(ApiToken, pk=pk or 0, user=request.user)
        if tokens.revoke(token, by=request.user):
            messages.success(request, f"The token “{token.name}” is revoked: it no longer works.")
        return redirect("api-tokens")
    if request.method == "POST":
        name, scopes, days = _read_form(request.POST, offered, errors)
        if not errors:
            try:
                created = tokens.create(request.user, name, scopes, days, by=request.user)
            except tokens.TooMany as refused:
                errors["tokens"] = refused.message
        status = 400 if errors else 201
    context = {
        "tokens": [(token, tokens.state(token)) for token in tokens.of_user(request.user)],
        "offered": [(scope, tokens.SCOPES[scope]) for scope in offered],
        "created": created,
        "errors": errors,
        "default_days": tokens.DEFAULT_DAYS,
        "max_days": tokens.MAX_DAYS,
    }
    return render(request, "api/tokens.html", context, status=status)


def _read_form(posted, offered: list[str], errors: dict) -> tuple[str, list[str], int]:
    name, scopes, days = "", [], tokens.DEFAULT_DAYS
    try:
        name = tokens.read_name(posted.get("name", ""))
    except readers.BadValue as bad:
        errors["name"] = bad.problem
    try:
        scopes = tokens.read_scopes(posted.getlist("scopes"))
        if set(scopes) - set(offered):
            raise readers.BadValue("scopes", "your roles cannot use one of these")
    except readers.BadValue as bad:
        errors["scopes"] = bad.problem
    try:
        days = tokens.read_days(posted.get("days", ""))
    except readers.BadValue as bad:
        errors["days"] = bad.problem
    return name, scopes, days
