"""The in-app side of notifications: the bell, the inbox and each user's preferences."""

from django.conf import settings
from django.contrib import messages
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from notifications import away, in_app, push, push_devices, push_pacing, subscriptions
from notifications.models import Notification, PushSubscription
from people import zones
from reviewqueue import changes, readers, roles

INBOX_SIZE = 100

role_required = roles.required(roles.has_a_role, "Notifications need the Reviewers or Auditors role.")


@role_required
@require_safe
def bell(request):
    # The fragment, unlike the bell drawn with a page, names the newest message worth a system notification.
    context = {"unread": in_app.unread_count(request.viewer), "desktop": in_app.newest_for_desktop(request.viewer)}
    return render(request, "notifications/_bell.html", context)


@role_required
@require_safe
def inbox(request):
    notifications = in_app.in_app_for(request.viewer).order_by("-created_at", "-pk")[:INBOX_SIZE]
    return render(request, "notifications/inbox.html", {"notifications": notifications})


@role_required
@require_POST
def mark_read(request):
    unread = Notification.objects.filter(user=request.user, channel=Notification.Channel.IN_APP, read_at__isnull=True)
    chosen = readers.identifier(request.POST.get("id", ""), "id")
    if chosen:
        unread = unread.filter(pk=chosen)
    if unread.update(read_at=timezone.now()):
        changes.publish("bell", users=[request.user.pk])  # the bell of each of their open pages
    return redirect("notifications")


@role_required
@require_http_methods(["GET", "HEAD", "POST"])
def preferences(request):
    """The person's preferences: which notifications reach them how, and (its own form) their time zone."""
    events = subscriptions.subscribable_events(request.viewer)
    zone_name, zone_error, away_errors, quiet_errors = zones.zone_name_of(request.user), "", {}, {}
    if request.method == "POST" and "away_until" in request.POST:
        away_errors = _save_away(request)
        if not away_errors:
            return redirect("notification-preferences")
    elif request.method == "POST" and "quiet_from" in request.POST:
        quiet_errors = _save_quiet_hours(request)
        if not quiet_errors:
            return redirect("notification-preferences")
    elif request.method == "POST" and "time_zone" in request.POST:
        zone_name = request.POST["time_zone"]
        try:
            zones.save(request, zones.chosen(zone_name))
        except readers.BadValue as bad:
            zone_error = bad.problem
        else:
            messages.success(request, "Your time zone is saved: times are now shown in it.")
            return redirect("notification-preferences")
    elif request.method == "POST":
        subscriptions.save_preferences(request.viewer, {event: request.POST.getlist(event) for event in events})
        messages.success(request, "Your notification preferences are saved.")
        return redirect("notification-preferences")
    offered = subscriptions.channels_offered()
    chosen = {event: subscriptions.channels_for(request.user, event) for event in events}
    rows = [
        {
            "event": event,
            "label": Notification.Event(event).label,
            "channels": [(each, Notification.Channel(each).label, each in chosen[event]) for each in offered],
        }
        for event in events
    ]
    context = {
        "rows": rows,
        "zone_name": zone_name,
        "zone_error": zone_error,
        "zones": zones.choices(),
        "away": away.of(request.user),
        "away_errors": away_errors,
        "can_delegate": roles.can_review(request.viewer),
        "desktop_newest": in_app.newest_for_desktop(request.viewer),  # turning them on shows none already there
        "push_enabled": push_devices.enabled(),
        "push_key": settings.WEBPUSH_VAPID_PUBLIC_KEY,
        "devices": PushSubscription.objects.filter(user=request.user).order_by("created_at", "pk"),
        "quiet": push_pacing.quiet_hours_of(request.user),
        "quiet_errors": quiet_errors,
        "pace_seconds": int(push_pacing.PACE.total_seconds()),
        "device_name_length": push_devices.NAME_LENGTH,
        "push_summary": settings.WEBPUSH_PAYLOAD == push.SUMMARY,
    }
    invalid = zone_error or away_errors or quiet_errors
    return render(request, "notifications/preferences.html", context, status=400 if invalid else 200)


def _save_quiet_hours(request) -> dict[str, str]:
    """The quiet hours form: both times, or both blank for none; the problems by field, none when saved."""
    errors, hours = {}, {}
    for field in ("quiet_from", "quiet_until"):
        try:
            hours[field] = readers.time_of_day(request.POST.get(field, ""), field)
        except readers.BadValue as bad:
            errors[field] = bad.problem
    if not errors and (hours["quiet_from"] is None) != (hours["quiet_until"] is None):
        errors["quiet_until" if hours["quiet_until"] is None else "quiet_from"] = "give both times, or neither"
    if not errors:
        push_pacing.save_quiet_hours(request.user, hours["quiet_from"], hours["quiet_until"])
        messages.success(request, "Your quiet hours are saved." if hours["quiet_from"] else "Quiet hours are off.")
    return errors


@role_required
@require_POST
def add_device(request):
    """A device subscribed in the page (``push.js``) sends its subscription here as JSON; field errors come back."""
    if not push_devices.enabled():
        return JsonResponse({"errors": {"subscription": "push notifications are off on this installation"}}, status=400)
    try:
        if len(request.body) > push_devices.MAX_BODY:
            raise readers.BadValue("subscription", "is far longer than a device's subscription")
        data = readers.json_value(request.body.decode("utf-8", "replace"), "subscription", deepest=3)
        fields = push_devices.read(data)
    except readers.BadValue as bad:
        return JsonResponse({"errors": {bad.name: bad.problem}}, status=400)
    device = push_devices.add(request.user, fields)
    messages.success(request, f"Push notifications are on for {device.name}.")
    return JsonResponse({"device": device.pk, "name": device.name}, status=201)


@role_required
@require_POST
def remove_device(request, device_id: int):
    if device := push_devices.remove(request.user, device_id):
        messages.success(request, f"{device.name} will get no more push notifications.")
    return redirect("notification-preferences")


@role_required
@require_POST
def test_device(request, device_id: int):
    """Send a test notification to one of the person's devices now, and say what came of it."""
    device, trouble = push_devices.test(request.user, device_id)
    if device is None:
        raise Http404("No such device.")
    if trouble:
        messages.error(request, trouble)
    else:
        messages.success(request, f"A test notification is on its way to {device.name}.")
    return redirect("notification-preferences")


def _save_away(request) -> dict[str, str]:
    """The away form: set "away until" with an optional delegate, or end it (blank, or *I'm back*); the problems by
    field, none when saved."""
    errors, until, delegate = {}, None, None
    if "back" not in request.POST:
        try:
            until = away.read_until(request.POST.get("away_until", ""), zones.for_request(request))
            away.check_until(until)
        except readers.BadValue as bad:
            errors["away_until"] = bad.problem
        try:
            delegate = away.read_delegate(request.viewer, request.POST.get("delegate", ""))
        except readers.BadValue as bad:
            errors["delegate"] = bad.problem
    if not errors:
        away.save(request.user, until, delegate, by=request.user)
        messages.success(request, "You are away; your messages are rerouted." if until else "You are back.")
    return errors
