"""Links to the platform's page of a run, from ``RUN_URL_TEMPLATE``; every app shows run ids the same way."""

from urllib.parse import quote

from django.conf import settings


def run_url(env: str, run_id: str) -> str:
    """The run's page on the platform, or "" when no template is set or there is no run id.

    Both ids are the platform's (and, through it, an agent's): each is URL-encoded whole,
    so a "/", "?" or "#" in one stays inside its own path segment.
    """
    template = settings.RUN_URL_TEMPLATE
    if not template or not run_id:
        return ""
    return template.format(env=quote(str(env), safe=""), run_id=quote(str(run_id), safe=""))
