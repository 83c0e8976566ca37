"""The Slack app's pages: the request URL Slack posts to, the connect link's page, and the Slack accounts in
Preferences. Thin: each reads the request, asks its module and answers."""

from django.conf import settings
from django.contrib import messages as flash
from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from holds.links import action_links
from holds.models import DecisionItem, Hold
from reviewqueue import input_guard, queueing, readers, roles
from slackapp import linking, pressing, verifying
from slackapp.models import SlackAccount
from slackapp.payloads import read
from teams import scopes

PRESS_TASK = "slackapp.tasks.handle_press"
role_required = roles.required(roles.has_a_role, "Slack accounts need the Reviewers or Auditors role.")


def _from_slack(request) -> HttpResponse | None:
    if not settings.SLACK_SIGNING_SECRET:
        raise Http404("The Slack app is off.")
    headers = request.headers
    timestamp, signature = headers.get(verifying.TIMESTAMP_HEADER), headers.get(verifying.SIGNATURE_HEADER)
    if not verifying.verified(request.body, timestamp, signature):
        return HttpResponse("Not a request from Slack.", status=401, content_type="text/plain")
    return None


@csrf_exempt  # Slack's signature is the check, not a session's token
@login_not_required
@require_POST
@input_guard.signature_first(_from_slack)
def interactivity(request):
    """Slack's request URL: verified first, read, handed to a worker and acknowledged at once (Slack waits 3 s)."""
    if request.content_type != "application/x-www-form-urlencoded":
        raise readers.BadValue("payload", "must be a form")
    press = read(request.POST.get("payload", ""))
    if press is not None:
        queueing.queue(PRESS_TASK, press.as_task_argument(), description=f"Slack press of {press.slack_user_id}")
    return HttpResponse(status=200)


@require_http_methods(["GET", "HEAD", "POST"])
def connect(request, key):
    """A connect link: who it binds to the signed-in person, once proven, and the press it then makes; its *Connect*
    (a POST) binds and presses."""
    try:
        link = linking.pending(key)
        rejecting = link.action == DecisionItem.Action.REJECT
        if request.method != "POST":
            who = linking.prove(link, request.user)
            hold = _hold_shown(link.button, request.viewer)
            context = {"link": link, "who": who, "hold": hold, "rejecting": rejecting}
            return render(request, "slackapp/connect.html", context)
        reason = ""
        if rejecting:
            reason = readers.text(request.POST.get("reason", "").replace("\r\n", "\n"), "reason", pressing.REASON_LIMIT)
        connected = linking.connect(key, request.user)
    except linking.Refused as refused:
        return render(request, "slackapp/connect_refused.html", {"message": str(refused)}, status=refused.status)
    answer = pressing.handle(linking.pressed(connected.link, reason), user=request.user)
    return render(request, "slackapp/connected.html", {"who": connected.who, "answer": answer})


@role_required
@require_http_methods(["GET", "HEAD", "POST"])
def accounts(request):
    """The person's linked Slack accounts (Preferences), each with Remove."""
    mine = SlackAccount.objects.filter(user=request.user).order_by("linked_at")
    if request.method == "POST":
        chosen = readers.identifier(request.POST.get("remove", ""), "remove")
        account = mine.filter(pk=chosen).select_related("user").first() if chosen else None
        if account is None:
            raise Http404("No such Slack account of yours.")
        linking.unlink(account, request.user)
        flash.success(request, "Your Slack account is unlinked: its presses decide nothing until you connect again.")
        return redirect("slack-accounts")
    return render(
        request,
        "slackapp/accounts.html",
        {
            "accounts": mine,
            "slack_app": bool(settings.SLACK_SIGNING_SECRET),
            "require_verified": settings.SLACK_REQUIRE_VERIFIED_LINKS,
        },
    )


def _hold_shown(button: str, viewer):
    """The hold the pressed button is about, when the viewer may see it."""
    try:
        hold_pk = action_links.read(button, action_links.BUTTON_CHANNELS).hold_pk
    except action_links.Refused:
        return None
    return scopes.visible(Hold.objects.all(), viewer).filter(pk=hold_pk).first()
