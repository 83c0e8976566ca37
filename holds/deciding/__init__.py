"""Deciding a hold: the reviewer's form (``review``, ``editing``, ``form_layout``), the business rules on edits
(``rules``), whether a hold can still be decided (``decidable``), presence, taking a decision the one way
(``decisions``, which ``holds.lifecycle`` stores in ``decision_rows``) and delivering it exactly once (``delivery``),
who decided (``deciders``), bulk decisions, the policies' own decisions (``by_policy``) and the sentence that says
what approving does (``describe``)."""
