"""Review Queue as an installable web app: its manifest, its service worker and the page that worker shows offline.

None of them holds anything of a hold, so each is served to anyone, signed in or not.
"""

import hashlib

from django.contrib.auth.decorators import login_not_required
from django.http import JsonResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from reviewqueue import softcache

NAME = "Review Queue"
# The top bar's colour (app.css's --surface) in each scheme: the installed app's title bar matches it. A test holds
# the two equal.
THEME_COLOURS = {"light": "#ffffff", "dark": "#1b2029"}
ICONS = [
    ("webapp/icon.svg", "any", "image/svg+xml"),
    ("webapp/icon-192.png", "192x192", "image/png"),
    ("webapp/icon-512.png", "512x512", "image/png"),
]
OFFLINE_TEMPLATE = "webapp/offline.html"
OFFLINE_STYLESHEET = "holds/app.css"  # the offline page's, which the worker keeps with it


@login_not_required
@require_safe
def manifest(request):
    """The web app manifest (W3C): opens on the queue, in a window of its own."""
    document = {
        "name": NAME,
        "short_name": NAME,
        "description": "Decide what AI agents may do.",
        "id": reverse("queue"),
        "start_url": reverse("queue"),
        "scope": "/",
        "display": "standalone",
        "background_color": THEME_COLOURS["light"],
        "theme_color": THEME_COLOURS["light"],
        "icons": [{"src": static(path), "sizes": sizes, "type": kind} for path, sizes, kind in ICONS],
    }
    return JsonResponse(document, content_type="application/manifest+json")


@login_not_required
@never_cache  # a new version of the worker reaches browsers at their next visit
@require_safe
def service_worker(request):
    """The service worker: the offline page when the network fails a page's load, and nothing else kept."""
    kept = [reverse("webapp:offline"), static(OFFLINE_STYLESHEET)]
    # A new offline page or stylesheet makes a new version, whose worker drops the old one's copies.
    version = hashlib.sha256(repr((softcache.template_digest(OFFLINE_TEMPLATE), kept)).encode()).hexdigest()[:16]
    context = {"offline_url": kept[0], "kept": kept, "version": version}
    return render(request, "webapp/service-worker.js", context, content_type="text/javascript")


@login_not_required
@require_safe
def offline(request):
    """What the service worker shows for a page it could not load."""
    return render(request, OFFLINE_TEMPLATE, {"stylesheet": OFFLINE_STYLESHEET})
