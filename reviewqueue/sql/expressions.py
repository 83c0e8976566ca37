"""SQL written out about a query's own rows, for the few expressions the ORM takes longer to build than to run.

``RowSQL`` is like ``RawSQL``, but its SQL names the row it is about as ``{row}``: the alias
the query gives its own table when it is compiled ("holds_hold" at the top, "U0" inside a
subquery). Written against a fixed table name instead, the SQL would, once its queryset
became another query's subquery, quietly read the outer query's rows.
"""

from __future__ import annotations

from django.db.models import Expression, Field


class RowSQL(Expression):
    def __init__(self, template: str, params: tuple = (), output_field: Field | None = None):
        super().__init__(output_field=output_field)
        self.template, self.params = template, tuple(params)

    def as_sql(self, compiler, connection):
        row = compiler.quote_name(compiler.query.base_table)
        return self.template.format(row=row), self.params
