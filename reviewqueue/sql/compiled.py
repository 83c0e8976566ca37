"""A queryset's SQL, compiled by the ORM once a process for each shape of query, then only given new values.

The queue's listing and the bell's count are built and compiled by Django on every page,
which took longer than PostgreSQL took to run them (prepared: reviewqueue/sql/prepared.py).
``sql`` has the ORM compile a query once per *shape* (whatever changes its SQL text: an
order, a team scope, which of the values are None) and works out where each value goes
among its parameters; a later call with the same shape only puts its values there.

It finds the places by compiling the query twice, with two sets of stand-in values that
no caller gives (``_stand_in``). A parameter equal to a value's stand-in in both compiles
is that value; one equal in both and to none of them is a constant of the query. If the
two compiles differ in anything else (their SQL text, the number of parameters, a
parameter that is neither), the ORM wrote a value into the SQL or changed it on the way
(a search's ``%...%``, say): nothing is kept, and that shape is compiled on every call, as
before. The SQL given is therefore always the ORM's own, for these values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import QuerySet

from reviewqueue import processcache

_NOT_KEPT = object()  # a shape whose compiles disagree: compiled on every call


@dataclasses.dataclass(frozen=True, slots=True)
class _Compiled:
    sql: str
    slots: tuple[tuple[str | None, Any], ...]  # per parameter: (value's name, None) or (None, the constant)

    def params(self, values: dict[str, Any]) -> tuple:
        return tuple(values[name] if name is not None else constant for name, constant in self.slots)


_kept: dict[Hashable, _Compiled | object] = {}
processcache.register(_kept.clear)


def sql(build: Callable[..., QuerySet], shape: tuple, **values) -> tuple[str, tuple]:
    """The SQL and parameters of ``build(*shape, **values).query``, as ``query.sql_with_params()`` gives them.

    Contract: ``build`` is a module-level function whose query depends on nothing but its arguments; ``shape`` holds
    every argument that may change the SQL's text (hashable); ``values`` are the others, each a datetime, an integer,
    a decimal, a string or a list of integers that the query passes as one array parameter (None too: the SQL
    differs, so which are None is part of the shape). A query that can
    match nothing raises ``EmptyResultSet``, as the ORM's compiler does.
    """
    key = (build, shape, tuple((name, type(value)) for name, value in sorted(values.items())))
    compiled = _kept.get(key)
    if compiled is None:
        compiled = _kept[key] = _compile(build, shape, values)
    if compiled is _NOT_KEPT:
        return build(*shape, **values).query.sql_with_params()
    return compiled.sql, compiled.params(values)


def _compile(build: Callable[..., QuerySet], shape: tuple, values: dict[str, Any]) -> _Compiled | object:
    named = {name for name, value in values.items() if value is not None}
    first, second = ({name: _stand_in(values[name], run, n) for n, name in enumerate(sorted(named))} for run in (1, 2))
    try:
        sql_1, params_1 = build(*shape, **(values | first)).query.sql_with_params()
        sql_2, params_2 = build(*shape, **(values | second)).query.sql_with_params()
    except Exception:  # noqa: BLE001 -- a stand-in the query refuses: compiled as it comes, with the caller's values
        return _NOT_KEPT
    if sql_1 != sql_2 or len(params_1) != len(params_2):
        return _NOT_KEPT
    slots = []
    for one, two in zip(params_1, params_2, strict=True):
        name = next((name for name in named if one == first[name] and two == second[name]), None)
        if name is not None:
            slots.append((name, None))
        elif one == two and type(one) is type(two):
            slots.append((None, one))
        else:
            return _NOT_KEPT
    return _Compiled(sql_1, tuple(slots))


def _stand_in(value: Any, run: int, position: int) -> Any:
    """A value of ``value``'s type that no caller gives, different for each run and position."""
    offset = run * 100 + position
    if isinstance(value, datetime):
        return datetime(2901, 1, 1, tzinfo=UTC) + timedelta(microseconds=offset)
    if isinstance(value, bool):
        raise TypeError("a boolean changes the SQL: put it in the shape")
    if isinstance(value, int):
        return 2_000_000_000 + offset
    if isinstance(value, Decimal):
        return Decimal(-7_000_000 - offset)
    if isinstance(value, str):
        return f"compiled-stand-in-{offset}"
    if isinstance(value, list) and all(type(one) is int for one in value):
        return [2_000_000_000 + offset]  # one array parameter, whatever the list's length
    raise TypeError(f"{type(value).__name__} is no value compiled.sql stands in for")
