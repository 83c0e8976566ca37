"""Deciding a hold: the reviewer's form (``review``, ``editing``, ``form_layout``), the business rules on edits
(``rules``), whether a hold can still be decided (``decidable``), presence, storing and delivering a
decision exactly once (``decisions``), bulk decisions, the policies' own decisions (``by_policy``) and the sentence
that says what approving does (``describe``)."""
