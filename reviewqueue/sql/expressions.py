"""SQL written out about a query's own rows, for the few expressions the ORM takes longer to build than to run.

``RowSQL`` is like ``RawSQL``, but its SQL names the row it is about as ``{row}``: the alias
the query gives its own table when it is compiled ("holds_hold" at the top, "U0" inside a
subquery). Written against a fixed table name instead, the SQL would, once its queryset
became another query's subquery, quietly read the outer query's rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.db import connection
from django.db.models import BooleanField, Expression, F, Field, Func, Model, Q, QuerySet

from reviewqueue.sql import prepared


class RowSQL(Expression):
    """An expression whose SQL is ``template`` with ``{row}`` replaced by the alias of the query's own table, and
    ``params`` its parameters; its value is read as ``output_field``."""

    def __init__(self, template: str, params: tuple = (), output_field: Field | None = None):
        super().__init__(output_field=output_field)
        self.template, self.params = template, tuple(params)

    def as_sql(self, compiler, connection):
        row = compiler.quote_name(compiler.query.base_table)
        return self.template.format(row=row), self.params


def count_of(queryset: QuerySet) -> QuerySet:
    """How many rows ``queryset`` has, as a query of one row and one column (``count``), for a scalar subquery or a
    statement's extra column: COUNT as a plain function, not an aggregate, so that no GROUP BY comes with it."""
    return queryset.order_by().annotate(count=Func(F("pk"), function="COUNT")).values("count")


def array_of(queryset: QuerySet, expression: Expression) -> QuerySet:
    """Every row's ``expression`` gathered into one array (NULL for no row), as a query of one row and one column
    (``values``), for a statement's extra column (PostgreSQL): ARRAY_AGG as a plain function, as ``count_of``."""
    gathered = Func(expression, function="ARRAY_AGG", output_field=expression.output_field)
    return queryset.order_by().annotate(values=gathered).values("values")


def negated(model: type[Model], field: str) -> RowSQL:
    """The row's ``field`` times -1, written as ``column * -1`` with the -1 in the SQL: the expression an index on the
    negated column is built on, which a prepared statement's plan for any parameters must match to use it."""
    column = model._meta.get_field(field)
    return RowSQL(f"{{row}}.{connection.ops.quote_name(column.column)} * -1", output_field=column)


def is_constant(model: type[Model], field: str, value: str) -> RowSQL:
    """Whether the row's ``field`` is ``value``, a constant of the code written into the SQL as a literal
    (``prepared.literal``; a ValueError for anything but a plain word): the condition a partial index's predicate
    must match for a prepared statement's plan, made for any parameters, to use that index."""
    column = connection.ops.quote_name(model._meta.get_field(field).column)
    return RowSQL(f"{{row}}.{column} = {prepared.literal(value)}", output_field=BooleanField())


def is_among(model: type[Model], field: str, values: list[int]) -> RowSQL:
    """Whether the row's integer ``field`` is one of ``values``, passed as one array parameter: a statement with a
    dozen parameters whatever the list's length, which psycopg converts once and keeps (it keeps no statement of
    over 50), where ``field__in`` gives one parameter a value. PostgreSQL only."""
    column = connection.ops.quote_name(model._meta.get_field(field).column)
    return RowSQL(f"{{row}}.{column} = ANY(%s::bigint[])", (list(values),), output_field=BooleanField())


def among(model: type[Model], field: str, values: list[int]) -> RowSQL | Q:
    """``is_among`` on PostgreSQL; ``field__in`` elsewhere (the quickstart's SQLite, which has no arrays)."""
    return is_among(model, field, values) if connection.vendor == "postgresql" else Q(**{f"{field}__in": values})


def has_any(related: type[Model], key: str) -> RowSQL:
    """Whether any row of ``related`` has the row's id in its column ``key`` (a boolean: ``EXISTS``)."""
    return RowSQL(
        f"EXISTS (SELECT 1 FROM {related._meta.db_table} related WHERE related.{key} = {{row}}.id)",
        output_field=BooleanField(),
    )


def in_status_with_none_live(status: str, related: type[Model], key: str, not_live: Iterable[str]) -> RowSQL:
    """Whether the row's ``status`` column is ``status`` and no row of ``related`` whose column ``key`` holds the row's
    id has a ``state`` outside ``not_live`` (a boolean). The status and the states are written into the SQL as literals
    (``prepared.literal``), not passed as parameters, so that a prepared statement's plan for any parameters still
    uses the partial indexes whose predicate names that status."""
    states = ", ".join(map(prepared.literal, not_live))
    return RowSQL(
        f"{{row}}.status = {prepared.literal(status)} AND NOT EXISTS (SELECT 1 FROM {related._meta.db_table} related"
        f" WHERE related.{key} = {{row}}.id AND related.state NOT IN ({states}))",
        output_field=BooleanField(),
    )


def compiled_once(model: type[Model], expression: Expression) -> RowSQL:
    """``expression``, about a row of ``model``, compiled by the ORM now and kept as SQL about its row: the same
    SQL and parameters the ORM gives, with ``model``'s table named ``{row}`` and the subqueries' own aliases ("U0",
    "V0") renamed ``"kept_U0"``, so that none can hide a query this SQL becomes part of, were that query itself a
    subquery aliased alike. For an expression whose nested subqueries take longer to compile than to run: the caller
    keeps the result (``processcache``) instead of compiling it on every query."""
    query = model.objects.annotate(value=expression).query
    compiler = query.get_compiler(connection=connection)
    sql, params = compiler.compile(query.annotations["value"])
    sql = re.sub(r'"([A-Z][0-9]+)"', r'"kept_\1"', sql.replace("{", "{{").replace("}", "}}"))
    row = f"{compiler.quote_name(model._meta.db_table)}."
    return RowSQL(sql.replace(row, "{row}."), params, expression.output_field)
