"""The queue: its orders, cursors, filters and keyset pages (``listing``), the rows drawn from its template partial
(``rows``) and the filter form (``filter_form``), each cached by what it shows."""
