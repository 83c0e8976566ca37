"""The queue: its orders, cursors, filters and keyset pages and the next hold to open (``listing``), the filters'
choices (``filter_values``), whether the mirror can be trusted (``freshness``), how a row shows amounts and urgency
(``display``), and the rows and filter form drawn from their templates and cached by what they show (``rows``,
``filter_form``).
"""
