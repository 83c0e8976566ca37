"""Every page's frame links to its static files and pages through ``reviewqueue.frame``, worked out once a process
for each script prefix: a page served under another prefix links under that one."""

import re
from pathlib import Path

import pytest
from django.templatetags.static import static
from django.urls import clear_script_prefix, reverse, set_script_prefix

from reviewqueue import frame, roles
from tests.helpers.users import make_user

TEMPLATES = [Path("templates/base.html"), Path("notifications/templates/notifications/_bell.html")]


@pytest.fixture
def everyone_client(client, db):
    """Signed in as a superuser who reviews and audits: the header shows every link it has."""
    user = make_user("root", roles.REVIEWERS, roles.AUDITORS, is_superuser=True, is_staff=True)
    client.force_login(user)
    return client


def test_every_link_the_templates_name_is_one_the_frame_makes():
    named = {key for template in TEMPLATES for key in re.findall(r"frame\.(\w+)", template.read_text())}

    assert named == set(frame.STATIC) | set(frame.PAGES)


def test_the_queue_links_its_frame_as_static_and_reverse_would(everyone_client):
    page = everyone_client.get(reverse("queue")).content.decode()

    for path in frame.STATIC.values():
        assert f'"{static(path)}"' in page, path
    for name in frame.PAGES.values():
        assert f'"{reverse(name)}"' in page, name


def test_a_page_served_under_another_script_prefix_links_under_it_and_the_root_keeps_its_own(everyone_client):
    """As Django's WSGI handler sets the prefix of each request (its test client sets none)."""
    try:
        set_script_prefix("/review/")
        mounted = everyone_client.get("/").content.decode()
        set_script_prefix("/")
        root = everyone_client.get("/").content.decode()
    finally:
        clear_script_prefix()

    assert 'class="brand" href="/review/"' in mounted and 'action="/review/logout/"' in mounted
    assert 'class="brand" href="/"' in root and 'action="/logout/"' in root
