"""What the one-tap link tests follow a link with: the site the links point to, a signed-in client, and Send
pressed on a link's page."""

import re

from django.test import Client

from holds.models import Decision

SITE = "https://review.example.com"


def path_of(url: str) -> str:
    assert url.startswith(SITE), url
    return url.removeprefix(SITE)


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def posted(client, path, **fields):
    """Press Send on the page at ``path``: its form's hidden fields, plus ``fields``."""
    page = client.get(path).content.decode()
    round_shown = re.search(r'name="round" value="(\d+)"', page).group(1)
    return client.post(path, {"round": round_shown, **fields})


def sent_decisions(hold):
    return list(Decision.objects.filter(hold=hold))
