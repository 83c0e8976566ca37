"""Deciding a hold: the reviewer's form (``review``, ``editing``, ``form_layout``), the business rules on edits
(``rules``), claims and presence, storing and delivering a decision exactly once (``decisions``), bulk decisions and
the sentence that says what approving does (``describe``)."""
