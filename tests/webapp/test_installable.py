"""Review Queue installs as an app: its manifest opens the queue in a window of its own with icons that exist, its
service worker sits at the root and keeps nothing but the offline page and its stylesheet, and that page holds
nothing of a person or a hold."""

import re
import struct
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse

from webapp.views import THEME_COLOURS

pytestmark = pytest.mark.django_db

APP_CSS = Path(finders.find("holds/app.css"))


def test_the_manifest_opens_the_queue_standalone_with_icons_of_the_sizes_it_names(client):
    response = client.get(reverse("webapp:manifest"))
    manifest = response.json()

    assert response.status_code == 200 and response["Content-Type"] == "application/manifest+json"
    assert (manifest["name"], manifest["start_url"], manifest["scope"]) == ("Review Queue", reverse("queue"), "/")
    assert manifest["display"] == "standalone" and manifest["theme_color"] == THEME_COLOURS["light"]
    sizes = {}
    for icon in manifest["icons"]:
        found = finders.find(icon["src"].removeprefix("/static/"))
        assert found, f"{icon['src']} is no static file"
        content = Path(found).read_bytes()
        if icon["type"] == "image/png":
            assert content[:8] == b"\x89PNG\r\n\x1a\n"
            width, height = struct.unpack(">II", content[16:24])
            sizes[icon["sizes"]] = f"{width}x{height}"
        else:
            assert icon["type"] == "image/svg+xml" and content.startswith(b"<svg ")
    assert sizes == {"192x192": "192x192", "512x512": "512x512"}


def test_the_theme_colours_are_the_top_bars_in_each_scheme():
    """The installed app's title bar takes the page's top bar colour: app.css's --surface, light and dark."""
    css = APP_CSS.read_text()
    light = re.search(r":root\s*{[^}]*--surface:\s*(#[0-9a-f]{6})", css)
    dark = re.search(r"prefers-color-scheme:\s*dark\)\s*{\s*:root\s*{[^}]*--surface:\s*(#[0-9a-f]{6})", css)

    assert {"light": light[1], "dark": dark[1]} == THEME_COLOURS


def test_the_service_worker_is_at_the_root_never_cached_and_keeps_only_the_offline_page_and_its_stylesheet(client):
    response = client.get("/service-worker.js")
    script = response.content.decode()

    assert response.status_code == 200 and response["Content-Type"].startswith("text/javascript")
    assert "no-cache" in response["Cache-Control"]
    kept = re.search(r"const KEPT_PATHS = \[(.*)\];", script)[1]
    assert re.findall(r'"([^"]+)"', kept) == [reverse("webapp:offline"), "/static/holds/app.css"]


def test_the_offline_page_is_open_to_anyone_and_shows_nothing_of_who_asked(client, alice):
    client.force_login(alice)

    response = client.get(reverse("webapp:offline"))
    page = response.content.decode()

    assert response.status_code == 200
    assert "You're offline; deciding needs a connection" in page
    assert "alice" not in page.lower() and "csrfmiddlewaretoken" not in page and "<script" not in page
