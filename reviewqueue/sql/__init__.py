"""The only hand-written SQL outside migrations, tests and the bench: the speed-ups the ORM cannot give.

- ``prepared``: statements prepared once per connection, and reads of querysets' own SQL through them;
- ``reads``: reads written out, where building them through the ORM cost a page more than running them;
- ``expressions``: SQL expressions about a query's own rows, for the ORM to place in its queries;
- ``writes``: PostgreSQL's COPY, for writing tens of thousands of rows at once, and a one-statement upsert.
"""
