"""The project's URLs plus ``/bench/bare/``: "ok" for a signed-in user, the floor every page is compared with.

It sits behind the same middleware as every page (LoginRequiredMiddleware sends a
stranger to the login form), so the difference to a page is the page's own work.
"""

from django.http import HttpResponse
from django.urls import include, path


def bare(request):
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [
    path("bench/bare/", bare, name="bench-bare"),
    path("", include("reviewqueue.urls")),
]
