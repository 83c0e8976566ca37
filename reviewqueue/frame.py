"""The links of every page's frame (templates/base.html and the bell in its header): the static files it loads and
the pages it links to, worked out once a process for each script prefix.

Every page draws the frame, and ``{% static %}`` and ``{% url %}`` work their URL out anew each time they render.
A static file's URL is fixed for the process: Django's storage keeps the base URL it was made with, and the
manifest its hashed names. A page's URL with no argument depends on the URL configuration, fixed for the process,
and the script prefix, which is the key here.
"""

from django.templatetags.static import static
from django.urls import get_script_prefix, reverse

from reviewqueue import processcache

STATIC = {
    "icon": "webapp/icon.svg",
    "touch_icon": "webapp/icon-192.png",
    "register_js": "webapp/register.js",
    "app_css": "holds/app.css",
    "app_js": "holds/app.js",
    "live_js": "live/live.js",
    "desktop_js": "notifications/desktop.js",
}
PAGES = {
    "manifest": "webapp:manifest",
    "service_worker": "webapp:service_worker",
    "queue": "queue",
    "audit": "audit:list",
    "admin": "admin:index",
    "logout": "logout",
    "notifications": "notifications",
    "notification_bell": "notification-bell",
}


def links(request) -> dict:
    """The context processor: ``frame``, each of ``STATIC`` and ``PAGES`` by its key."""
    return {"frame": _links(get_script_prefix())}


@processcache.cached
def _links(script_prefix: str) -> dict[str, str]:
    return {key: static(path) for key, path in STATIC.items()} | {key: reverse(name) for key, name in PAGES.items()}
