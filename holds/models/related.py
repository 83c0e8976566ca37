"""What each item of a hold acts on (``HoldSubject``, written whenever a hold is mirrored; ``SharedHold`` marks the
holds sharing one), the admins' choice of the keys read as subjects per agent and capability (``SubjectKeys``), and
the holds to read again after such a change (``SubjectRereading``): see ``holds/related/subjects.py``,
``holds/related/stored.py`` and ``holds/related/sharing.py``."""

from django.db import models

from holds.models.mirror import Hold


class HoldSubject(models.Model):
    """One subject of one item of a hold: the rows the related holds and possible duplicates are looked up by."""

    # No database constraint: the rows are an index of what their hold says, written by sync beside it, and the
    # check PostgreSQL would make of each at COMMIT (a lookup and a lock of the hold's row) weighs on the first sync.
    # A hold is never deleted, and Django's CASCADE would still take its subjects with it.
    hold = models.ForeignKey(Hold, on_delete=models.CASCADE, related_name="subjects", db_constraint=False)
    position = models.PositiveIntegerField(help_text="The item's position in its hold.")
    key = models.TextField(help_text="The key as the agent wrote it, shown only.")
    value = models.CharField(max_length=200, help_text="Normalised: trimmed, case-folded, a leading # dropped.")
    capability = models.TextField(help_text="The hold's, cut to what an index holds.")
    action_kind = models.CharField(max_length=100, blank=True, help_text="Blank when unknown: it matches any kind.")
    approved = models.BooleanField(
        default=False,
        db_default=False,
        help_text="The item approved, as the platform reports the hold decided (every item, when it reports a decision"
        " but not item by item).",
    )

    class Meta:
        ordering = ["hold", "position", "pk"]
        indexes = [models.Index(fields=["value", "capability"], name="subject_value_capability")]

    def __str__(self) -> str:
        return f"{self.key}: {self.value}"


class SharedHold(models.Model):
    """A hold with a subject (value and capability) that another hold's items have too, marked as either's subjects
    are written (``holds/related/sharing.py``): the queue looks for possible duplicates among these holds alone. A
    mark stays: a hold once marked is always looked at, which costs a lookup and misses nothing."""

    # No constraint, as for the subjects: a mark is an index of them. Two writers may mark one hold at once, each
    # unaware of the other: a second row says the same, where a unique one would have one of them wait.
    hold = models.ForeignKey(Hold, on_delete=models.CASCADE, related_name="+", db_constraint=False)

    def __str__(self) -> str:
        return f"hold {self.hold_id} shares a subject"


class SubjectKeys(models.Model):
    """Keys an admin adds to those read as an item's subjects, or takes away, for one agent's holds (of one
    capability, or of any)."""

    agent = models.CharField(max_length=500)
    capability = models.CharField(max_length=500, blank=True, help_text="Blank: every capability of the agent.")
    keys_added = models.TextField(blank=True, help_text="Keys to read as subjects too, separated by commas.")
    keys_removed = models.TextField(
        blank=True, help_text="Keys never to read as subjects, separated by commas; “item id” stops reading item ids."
    )

    class Meta:
        verbose_name = "subject keys"
        verbose_name_plural = "subject keys"
        constraints = [models.UniqueConstraint(fields=["agent", "capability"], name="subject_keys_once")]

    def __str__(self) -> str:
        return f"subject keys of {self.agent}/{self.capability or '*'}"


class SubjectRereading(models.Model):
    """A change of subject keys not yet applied to the holds already stored: made in the change's transaction, taken
    away once every stored hold of the agent (and capability; blank: any) is read again with the keys as they are."""

    agent = models.CharField(max_length=500)
    capability = models.CharField(max_length=500, blank=True)
    asked_at = models.DateTimeField(help_text="The latest change asking for it: a reading begun before runs again.")
    read_until = models.DateTimeField(
        null=True, blank=True, help_text="Until when a run reading the holds has it: another run leaves it meanwhile."
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "capability"], name="subject_rereading_once")]

    def __str__(self) -> str:
        return f"subjects of {self.agent}/{self.capability or '*'} to read again"
