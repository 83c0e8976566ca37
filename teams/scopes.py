"""Which holds a user may see: the one module that reads team scopes.

A user's scopes are those of their groups that have one (``TeamScope``); a hold is visible to
them when it is in any of these. A user in no scoped group sees every hold, as does a
superuser, and so does a member of a scope that limits nothing (every field blank). Anonymous
users see none. Views answer 404 for a hold out of scope, so that an id reveals nothing.

Patterns are shell-style globs with ``glob_matches``' semantics (``*``, ``?``, ``[abc]``,
``[a-z]``, ``[!abc]``, case-sensitive), matched in Python against one hold and in SQL, as
anchored regular expressions that escape everything else, against a queryset: the same
expression runs on PostgreSQL (``~``) and on SQLite (Django's ``REGEXP``, Python's ``re``).
A pattern a reviewer's queue could not read the same way in both (an unclosed ``[``, a range
running backwards) is refused by ``check_patterns``, the admin form's validation.

A viewer's scopes (``reviewqueue.viewer``) are read with their groups, in one query: once a request for
``request.viewer``, once for all the recipients of a notification.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import string
from collections.abc import Iterable
from typing import NamedTuple

from django.db.models import Q

from reviewqueue.sql import reads
from reviewqueue.viewer import Viewer
from teams.models import TeamScope

FIELDS = ("env", "agent", "capability")
LONGEST_PATTERN = 300
# Characters a regular expression could read as syntax: each is written escaped, in both engines
# a plain character. Letters, digits and "_" never are escaped: "\d" or "\w" would be a class.
SYNTAX = frozenset(string.punctuation) - {"_"}
GLOB_CHARACTERS = frozenset("*?[")


class InvalidPattern(ValueError):
    """A glob that ``check_patterns`` refuses; the message is for the admin who wrote it."""


@dataclasses.dataclass(frozen=True)
class Scope:
    """One group's scope: per field, the globs one of which a hold's value must match (none: any value)."""

    env: tuple[str, ...] = ()
    agent: tuple[str, ...] = ()
    capability: tuple[str, ...] = ()

    @classmethod
    def of(cls, env_patterns: str, agent_patterns: str, capability_patterns: str) -> Scope:
        return cls(patterns(env_patterns), patterns(agent_patterns), patterns(capability_patterns))

    @property
    def unlimited(self) -> bool:
        return not (self.env or self.agent or self.capability)

    def contains(self, hold) -> bool:
        return all(self.admits(field, getattr(hold, field)) for field in FIELDS)

    def admits(self, field: str, value: str) -> bool:
        """Whether ``value`` of ``field`` (env, agent or capability) matches one of the field's globs, if it has any."""
        globs = getattr(self, field)
        return not globs or any(glob_matches(glob, value) for glob in globs)

    def q(self, prefix: str = "") -> Q:
        found = Q()
        for field, globs in self._by_field():
            if globs:
                found &= _matching_any(prefix + field, globs)
        return found

    def _by_field(self):
        return ((field, getattr(self, field)) for field in FIELDS)


def patterns(text: str) -> tuple[str, ...]:
    """The globs of one field as the admin wrote them: one a line, blanks around them and blank lines dropped."""
    return tuple(line.strip() for line in text.splitlines() if line.strip())


# Reading who a viewer is


def viewer_of(user) -> Viewer:
    """``user`` as a viewer: their groups' names and team scopes, in one query (none for someone signed out)."""
    return viewers_of([user])[0]


def viewers_of(users: Iterable) -> list[Viewer]:
    """Each of ``users`` as a viewer, in their order: the groups and scopes of them all read in one query."""
    users = list(users)
    rows: dict[int, list[tuple]] = {}
    for user_pk, *row in reads.groups_with_scopes(
        {user.pk for user in users if user.is_authenticated and user.is_active}, TeamScope._meta.db_table
    ):
        rows.setdefault(user_pk, []).append(row)
    return [_viewer(user, rows.get(user.pk, [])) for user in users]


def _viewer(user, rows: list[tuple]) -> Viewer:
    """A viewer of ``rows``, their (group name, scope pk, its three fields' patterns): a superuser sees every hold,
    someone signed out or inactive none, anyone else what their scoped groups do (``_union``)."""
    if not (user.is_authenticated and user.is_active):
        return Viewer(user)
    scoped = [Scope.of(*fields) for _, scope_pk, *fields in rows if scope_pk is not None]
    found = None if user.is_superuser else _union(scoped)
    return Viewer(user, frozenset(name for name, *_ in rows), None if found is None else tuple(found))


def _union(scopes: list[Scope]) -> list[Scope] | None:
    """What a user in these scoped groups sees: None (every hold) for no group, or one limiting nothing."""
    return None if not scopes or any(scope.unlimited for scope in scopes) else scopes


# Asking about holds


def visible_holds_q(viewer: Viewer, prefix: str = "") -> Q | None:
    """A filter on holds (or, with ``prefix`` such as ``"hold__"``, on rows pointing to one) keeping those
    the viewer may see; None when they may see all."""
    return scopes_q(viewer.scopes, prefix)


def visible(holds, viewer: Viewer):
    """``holds`` (a queryset) narrowed to those the viewer may see."""
    return within(holds, viewer.scopes)


def within(holds, seen: tuple[Scope, ...] | None):
    """``holds`` (a queryset) narrowed to those in one of the scopes ``seen`` (a viewer's ``scopes``: None, every
    hold): for a query built alike for every viewer with the same scopes."""
    condition = scopes_q(seen)
    return holds if condition is None else holds.filter(condition)


def scopes_q(seen: tuple[Scope, ...] | None, prefix: str = "") -> Q | None:
    """``visible_holds_q`` for a viewer with the scopes ``seen``: for a query built alike for all such viewers."""
    if seen is None:
        return None
    return _any_of([scope.q(prefix) for scope in seen], prefix)


def may_see(viewer: Viewer, hold) -> bool:
    return viewer.scopes is None or any(scope.contains(hold) for scope in viewer.scopes)


def users_who_may_see(holds: Iterable, viewers: Iterable[Viewer]) -> list:
    """The users of those ``viewers`` who may see every one of ``holds`` (None entries skipped): recipients of a
    notification."""
    holds = [hold for hold in holds if hold is not None]
    return [viewer.user for viewer in viewers if all(may_see(viewer, hold) for hold in holds)]


class Combination(NamedTuple):
    """An env, agent and capability that some open hold has together: admitted by a scope as that hold is."""

    env: str
    agent: str
    capability: str


def offered_values(viewer: Viewer, combinations: Iterable[Combination]) -> dict[str, list[str]]:
    """The queue's filter choices (env, agent, capability → values, sorted): the values of those of
    ``combinations`` that the viewer may see a hold with, blank ones (too long to offer) aside.

    A scope admits a hold by all three fields at once, so a value is offered only with the other
    two its hold has: an agent whose holds are all in an env the scope leaves out is not.
    """
    offered: dict[str, set[str]] = {field: set() for field in FIELDS}
    for combination in combinations:
        if may_see(viewer, combination):
            for field, value in zip(FIELDS, combination, strict=True):
                offered[field].add(value)
    return {field: sorted(values - {""}) for field, values in offered.items()}


# Globs: matched, checked, and written as regular expressions


def glob_matches(pattern: str, value: str) -> bool:
    """Case-sensitive shell-style matching (``prod-*``); a blank pattern matches anything. Approval policies match
    with it too."""
    return not pattern or fnmatch.fnmatchcase(value, pattern)


def check_patterns(text: str) -> tuple[str, ...]:
    """The globs of ``text``, each checked; raise ``InvalidPattern`` naming the first one that cannot be a glob here."""
    globs = patterns(text)
    for glob in globs:
        if len(glob) > LONGEST_PATTERN:
            raise InvalidPattern(f"“{glob[:40]}…” is longer than {LONGEST_PATTERN} characters.")
        _parse(glob)
    return globs


def _matching_any(field: str, globs: tuple[str, ...]) -> Q:
    """Rows whose ``field`` matches one of ``globs``: literal ones by equality, the others by one regular expression."""
    literal = [glob for glob in globs if not GLOB_CHARACTERS & set(glob)]
    wild = [glob for glob in globs if GLOB_CHARACTERS & set(glob)]
    conditions = [Q(**{f"{field}__in": literal})] if literal else []
    if wild:
        conditions.append(Q(**{f"{field}__regex": glob_regex(*wild)}))
    return _any_of(conditions)


def _any_of(conditions: list[Q], prefix: str = "") -> Q:
    """Rows meeting one of ``conditions``; none for no condition."""
    if not conditions:
        return Q(**{f"{prefix}pk__in": []})
    found = conditions[0]
    for condition in conditions[1:]:
        found |= condition
    return found


def glob_regex(*globs: str) -> str:
    """One regular expression matching a whole value that one of ``globs`` matches, on PostgreSQL and in Python alike.

    ``(?s)`` lets ``.`` match a newline in both; ``\\A`` and ``\\Z`` anchor at the value's very ends in both.
    """
    return r"(?s)\A(?:" + "|".join(_regex(_parse(glob)) for glob in globs) + r")\Z"


def _escaped(character: str) -> str:
    return "\\" + character if character in SYNTAX else character


def _regex(tokens: list) -> str:
    written = []
    for token in tokens:
        if token == "*":
            written.append(".*")
        elif token == "?":
            written.append(".")
        elif isinstance(token, str):
            written.append(_escaped(token))
        else:
            negated, members = token
            inside = "".join(
                _escaped(low) if low == high else f"{_escaped(low)}-{_escaped(high)}" for low, high in members
            )
            written.append(f"[{'^' if negated else ''}{inside}]")
    return "".join(written)


def _parse(glob: str) -> list:
    """The glob as fnmatch reads it, in tokens: "*", "?", a literal character, or a set (negated, [(low, high), …])."""
    tokens: list = []
    i, n = 0, len(glob)
    while i < n:
        character = glob[i]
        i += 1
        if character == "*":
            if not tokens or tokens[-1] != "*":
                tokens.append("*")
        elif character == "?":
            tokens.append("?")
        elif character == "[":
            # As fnmatch: a "!" first negates, and a "]" first (after any "!") is a member.
            j = i + 1 if i < n and glob[i] == "!" else i
            j = j + 1 if j < n and glob[j] == "]" else j
            end = glob.find("]", j)
            if end < 0:
                raise InvalidPattern(f"In “{glob}”, a “[” opens a set that no “]” closes; write [[] for a plain “[”.")
            negated = glob[i] == "!"
            tokens.append((negated, _members(glob, glob[i + 1 if negated else i : end])))
            i = end + 1
        else:
            tokens.append(character)
    return tokens


def _members(glob: str, inside: str) -> list[tuple[str, str]]:
    members, k = [], 0
    while k < len(inside):
        if k + 2 < len(inside) and inside[k + 1] == "-":
            low, high = inside[k], inside[k + 2]
            if low > high:
                raise InvalidPattern(f"In “{glob}”, the range “{low}-{high}” runs backwards: write “{high}-{low}”.")
            members.append((low, high))
            k += 3
        else:
            members.append((inside[k], inside[k]))
            k += 1
    return members
