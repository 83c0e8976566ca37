"""Team scopes' globs, read the same in SQL as in Python whatever the names, and scopes set in the admin."""

import base64
import re

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.urls import reverse
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from audit.models import AuditEvent, EventKind
from holds.mirror import sync
from holds.models import Hold
from reviewqueue import roles
from teams import scopes
from teams.models import TeamScope
from teams.scopes import viewer_of
from tests.helpers.users import make_user, scoped_group

pytestmark = pytest.mark.django_db

PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()


# Globs: the same in SQL as in Python, whatever the names


def agents_matching(pattern: str) -> set[str]:
    group = scoped_group(f"g{Group.objects.count()}", agent=pattern)
    user = make_user(f"u{group.pk}", roles.REVIEWERS)
    user.groups.add(group)
    return set(scopes.visible(Hold.objects.all(), viewer_of(user)).values_list("agent", flat=True))


HOSTILE_AGENTS = [
    "a.b",
    "axb",
    "a*b",
    "(.*)",
    "a|b",
    "a",
    "b",
    r"a\b",
    "[x]",
    "x",
    "a+b",
    "aab",
    "a$",
    "^a",
    "a\nb",
    "ünï",
    "%_%",
]


@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("a.b", {"a.b"}),
        ("a?b", {"a.b", "axb", "a*b", "a|b", "a+b", "aab", "a\nb", r"a\b"}),
        ("(.*)", {"(.*)"}),
        ("a|b", {"a|b"}),
        (r"a\b", {r"a\b"}),
        ("[[]x]", {"[x]"}),
        ("[!a-z]*", {"(.*)", "[x]", "ünï", "%_%", "^a"}),
        ("a[*]b", {"a*b"}),
        ("a$", {"a$"}),
        ("^a", {"^a"}),
        ("ü*", {"ünï"}),
        ("%_%", {"%_%"}),
        ("*", set(HOSTILE_AGENTS)),
    ],
)
def test_a_pattern_matches_only_what_the_glob_says_however_the_names_look(
    platform_state, platform_client, pattern, expected
):
    for agent in HOSTILE_AGENTS:
        platform_state.add_hold("default", {"agent": agent})
    sync.sync_env(platform_client, "default")

    assert agents_matching(pattern) == expected
    assert expected == {agent for agent in HOSTILE_AGENTS if scopes.glob_matches(pattern, agent)}


@pytest.mark.parametrize(
    "patterns, problem",
    [
        ("prod-[eu", "no “]” closes"),
        ("billing-*\n[]", "no “]” closes"),
        ("[z-a]", "runs backwards"),
        ("x" * 301, "longer than 300"),
    ],
)
def test_a_pattern_the_queue_could_not_read_is_refused_with_a_clear_message(patterns, problem):
    with pytest.raises(scopes.InvalidPattern, match=problem):
        scopes.check_patterns(patterns)


GLOB_ALPHABET = st.sampled_from(list("ab-*?[]!^\\.$()|+{}:=é\n_%") + ["[[]", "[!a]", "[a-c]", "[]]"])
VALUES = st.text(st.sampled_from(list("abc-[]!^\\.$()|*?+{}:=é\n_% Z")), max_size=8)


def valid_glob(pattern: str) -> bool:
    try:
        scopes.check_patterns(pattern.replace("\n", ""))
    except scopes.InvalidPattern:
        return False
    return bool(scopes.patterns(pattern.replace("\n", "")))


def matches_in_postgres(regex: str, value: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::text ~ %s", [value, regex])
        return cursor.fetchone()[0]


@settings(
    max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pattern=st.lists(GLOB_ALPHABET, min_size=1, max_size=8).map("".join).filter(valid_glob), value=VALUES)
@example(pattern="[]-a]", value="^")
@example(pattern="[!]]", value="\n")
@example(pattern="a*", value="a\n")
@example(pattern="[\\-a]", value="]")
def test_the_sql_and_python_matching_agree_with_glob_matches(db, pattern, value):
    """The expression runs as PostgreSQL's ``~`` and, on SQLite, as Django's REGEXP (Python's ``re.search``)."""
    glob = scopes.patterns(pattern.replace("\n", ""))[0]
    regex = scopes.glob_regex(glob)
    expected = scopes.glob_matches(glob, value)

    assert matches_in_postgres(regex, value) == expected
    assert bool(re.search(regex, value)) == expected


# The admin


@pytest.fixture
def admin_client(client):
    client.force_login(make_user("root", is_superuser=True, is_staff=True))
    return client


def group_form(group: Group, **scope) -> dict:
    form = {
        "name": group.name,
        "team_scope-TOTAL_FORMS": "1",
        "team_scope-INITIAL_FORMS": "0",
        "team_scope-MIN_NUM_FORMS": "0",
        "team_scope-MAX_NUM_FORMS": "1",
        "team_scope-0-group": str(group.pk),
    }
    form.update({f"team_scope-0-{field}": value for field, value in scope.items()})
    return form


def test_an_admin_scopes_a_group_on_its_page_and_the_audit_records_the_patterns(admin_client):
    group = Group.objects.create(name="Billing")

    response = admin_client.post(
        reverse("admin:auth_group_change", args=[group.pk]), group_form(group, agent_patterns="billing-*")
    )

    assert response.status_code == 302
    assert TeamScope.objects.get(group=group).agent_patterns == "billing-*"
    event = AuditEvent.objects.get(kind=EventKind.ROLE_CHANGED, payload__model="auth.group")
    assert event.payload["object"] == "Billing" and "team scope" in event.payload["message"]
    assert event.payload["changes"]["fields"] == {"team scope agent_patterns": ["", "billing-*"]}


def test_removing_a_groups_scope_is_audited_with_the_patterns_it_had(admin_client):
    group = scoped_group("Billing", agent="billing-*")
    form = {
        **group_form(group, id=str(group.team_scope.pk), agent_patterns="billing-*", DELETE="on"),
        "team_scope-INITIAL_FORMS": "1",
    }

    response = admin_client.post(reverse("admin:auth_group_change", args=[group.pk]), form)

    assert response.status_code == 302 and not TeamScope.objects.exists()
    event = AuditEvent.objects.get(kind=EventKind.ROLE_CHANGED, payload__model="auth.group")
    assert event.payload["changes"]["fields"] == {"team scope agent_patterns": ["billing-*", ""]}


def test_a_scope_changed_in_its_own_list_is_audited_with_its_values(admin_client):
    scope = TeamScope.objects.get(group=scoped_group("Billing", agent="billing-*"))
    form = {
        "group": str(scope.group_id),
        "env_patterns": "prod-*",
        "agent_patterns": "billing-*",
        "capability_patterns": "",
    }

    response = admin_client.post(reverse("admin:teams_teamscope_change", args=[scope.pk]), form)

    assert response.status_code == 302
    event = AuditEvent.objects.get(kind=EventKind.SETTING_CHANGED, payload__model="teams.teamscope")
    assert event.payload["changes"]["fields"] == {"team scope env_patterns": ["", "prod-*"]}


def test_the_admin_refuses_an_unclosed_bracket_with_a_field_error(admin_client):
    group = Group.objects.create(name="Billing")

    response = admin_client.post(
        reverse("admin:auth_group_change", args=[group.pk]), group_form(group, env_patterns="prod-[eu")
    )

    assert response.status_code == 200
    assert "a “[” opens a set that no “]” closes" in response.content.decode()
    assert not TeamScope.objects.exists()


def test_the_admin_lists_the_scopes_on_their_own(admin_client):
    scoped_group("Billing", agent="billing-*")

    page = admin_client.get(reverse("admin:teams_teamscope_changelist")).content.decode()

    assert "billing-*" in page and "Billing" in page
