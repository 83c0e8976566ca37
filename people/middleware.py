"""Shows every page in the signed-in person's time zone."""

from django.utils import timezone

from people import zones


class TimeZoneMiddleware:
    """Activates the user's zone for the request (after authentication), so templates and ``localtime`` use it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.user.is_authenticated:
            timezone.activate(zones.for_request(request))
        else:
            timezone.deactivate()
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
