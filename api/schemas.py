"""What the API reads and answers, as pydantic schemas: django-ninja writes the OpenAPI document from these."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from ninja import Field, Schema

from holds.deciding import review
from holds.handover.notes import MAX_NOTE


class Problem(Schema):
    """An RFC 9457 problem document."""

    type: str = Field(description="A URN naming the kind of problem, or about:blank.")
    title: str
    status: int
    detail: str
    instance: str | None = None
    errors: list[FieldProblem] | None = Field(None, description="One per field of bad input.")
    duplicates: list[str] | None = Field(
        None,
        description="possible-duplicate: the ids of the other holds the token's user may see; list them in "
        "duplicates_checked once checked.",
    )
    more_duplicates: int | None = Field(
        None, description="possible-duplicate: how many more there are outside the user's teams (never named)."
    )


class FieldProblem(Schema):
    field: str = Field(description="The field as the request named it: a query parameter, or items[0].data.amount.")
    message: str


Problem.model_rebuild()


class Person(Schema):
    username: str
    name: str


class Claim(Schema):
    by: Person
    until: datetime


class Approvals(Schema):
    badge: str = Field(description='"1 of 2 approvals", "Needs 2 approvals"; "" for a hold one person decides.')
    why: str = Field(description="Why the policy asks for more than one approval.")
    given: int = Field(description="Approvals in the open round.")


class HoldSummary(Schema):
    id: int = Field(description="Review Queue's id of the hold, used in the API's paths.")
    hold_id: str = Field(description="The platform's id of the hold.")
    env: str
    agent: str
    capability: str
    question: str
    created_at: datetime
    expires_at: datetime | None
    amount: str | None = Field(description="The largest amount its items carry, as a decimal.")
    amounts: list[str] = Field(description="Every amount its items carry, as the agent wrote them.")
    approvals: Approvals
    claim: Claim | None = Field(description="Who is deciding it now, while their claim runs.")
    assigned_to: str | None = Field(description="The username or group it is assigned to.")
    url: str


class HoldPage(Schema):
    holds: list[HoldSummary]
    next: str | None = Field(description="The next page, as a path with the same filters; null on the last page.")


class Item(Schema):
    id: str
    title: str
    data: Any


class FileInfo(Schema):
    id: str | None = None
    name: str | None = None
    content_type: str | None = None


class Note(Schema):
    id: int
    author: str
    text: str
    created_at: datetime


class Assignment(Schema):
    assignee: str = Field(description="A username, or a group's name.")
    kind: Literal["person", "group"]
    note: str
    assigned_by: str | None
    assigned_at: datetime


class StageApproval(Schema):
    by: str = Field(description="The approver's username.")
    at: datetime


class Stage(Schema):
    position: int = Field(description="1 for the chain's first stage.")
    group: str | None = Field(description="The group that approves in it; null: any reviewer.")
    quorum: int | Literal["all"] = Field(description='How many distinct people it needs; "all": everyone in the group.')
    needs: int = Field(description="How many people that is now.")
    with_previous: bool = Field(description="Whether it runs alongside the stage before it.")
    approvals: list[StageApproval] = Field(description="The open round's approvals counting in it.")
    state: Literal["done", "waiting", "later"] = Field(
        description="done: it has its people; waiting: it is open now; later: it opens once the stages before it are "
        "done."
    )


class Standing(Schema):
    required: int = Field(description="Approvals the hold's policy asks for now.")
    given: int = Field(description="Approvals in its open round.")
    badge: str
    summary: str = Field(description='"1 of 2 approvals: alice approved …"; "" without approvals.')
    may_approve: bool = Field(description="Whether the token's user may give the next approval.")
    refusal: str = Field(description="Why not, when they may not.")


class DecisionItem(Schema):
    id: str
    action: Literal["approve", "edit", "reject"]
    data: Any = None
    comment: str


class DecisionOut(Schema):
    id: int
    hold: int = Field(description="Review Queue's id of the hold.")
    state: Literal["sending", "applied", "not_applied", "withdrawn"]
    outcome: str = Field(description="What the platform made of it, once it answered.")
    outcome_message: str
    decided_by: str = Field(description="The reviewer's username, or the policy that decided.")
    created_at: datetime
    undo_until: datetime | None
    undoable: bool
    attempts: int
    finished_at: datetime | None
    items: list[DecisionItem]
    url: str


class RelatedItem(Schema):
    id: str
    title: str


class SharedSubject(Schema):
    key: str = Field(description="The key naming it on this hold's item (\"item id\" for the item's own id).")
    value: str = Field(description="The value as this hold's item writes it.")


class RelatedHold(Schema):
    id: int = Field(description="Review Queue's id of the related hold.")
    hold_id: str
    agent: str
    capability: str
    status: Literal["open", "decided", "expired", "cancelled", "gone"]
    amount: str | None = Field(description="The largest amount its items carry, as a decimal.")
    items: list[RelatedItem]
    shares: list[SharedSubject] = Field(description="The subjects (order, customer…) it shares with this hold.")
    decided_by: str = Field(description='Who decided it, here or as the platform reports; "" while nobody has.')
    decided_at: datetime | None
    reported: str = Field(description="What the platform reported of it.")
    possible_duplicate: bool
    url: str


class HoldDetail(HoldSummary):
    status: Literal["open", "decided", "expired", "cancelled", "gone"]
    run_id: str
    intent: str
    details: str
    actions: list[str] = Field(description="What the platform lets a reviewer do: approve, edit, reject.")
    items: list[Item]
    files: list[FileInfo]
    run: dict | None = Field(description="The run behind the hold, fresh from the platform or as last fetched.")
    run_error: str = Field(description='Why the run could not be refreshed from the platform; "" when it was.')
    closed_reason: str = Field(description='Why it can no longer be decided; "" while it can.')
    standing: Standing
    stages: list[Stage] = Field(
        description="The approval chain of its policy, stage by stage, with where its open round stands; [] for a "
        "hold one person decides or a policy decides alone."
    )
    assignment: Assignment | None
    notes: list[Note]
    decision: DecisionOut | None = Field(description="Its latest decision.")
    etag: str = Field(description="Send it back as If-Match with a decision: 409 if the hold changed meanwhile.")
    related: list[RelatedHold] = Field(
        description="The holds sharing a subject with it (an order, a customer…), open or closed within "
        "RELATED_WINDOW_DAYS, in the token's team scopes."
    )
    possible_duplicate_of: list[int] = Field(
        description="Review Queue's ids of the related holds it may duplicate (same subject, capability and kind of "
        "action; open, or approved within the window), in the token's team scopes."
    )


class ChoiceIn(Schema):
    id: str = Field(description="The item's id.", max_length=10_000)
    action: Literal["approve", "edit", "reject"]
    data: Any = Field(None, description="For an edit: the item's whole data, edited.")
    comment: str = Field("", max_length=review.MAX_COMMENT)


class DecisionIn(Schema):
    """The platform's own shape of a decision: one choice per item of the hold."""

    items: list[ChoiceIn] = Field(min_length=1, max_length=1000)
    duplicates_checked: list[Annotated[str, Field(max_length=200)]] | None = Field(
        None,
        max_length=1000,
        description="Approving a possible duplicate: the ids of the other holds you checked, every one the 409 "
        "possible-duplicate named. Without it such an approval is refused; a reject needs none.",
    )


class Waiting(Schema):
    approval: int = Field(description="The approval recorded; nothing was sent.")
    position: int
    required: int
    next_from: str = Field(description="Who may give the next approval.")


class ApprovalWithdrawn(Schema):
    approval: int = Field(description="The approval taken back.")
    hold: int = Field(description="Review Queue's id of the hold, one approval short again.")


class DecisionAnswer(Schema):
    state: Literal["stored", "waiting"] = Field(
        description="stored: the decision is stored and will be delivered; waiting: an approval was recorded and "
        "more are needed, nothing was sent."
    )
    decision: DecisionOut | None
    waiting: Waiting | None
    links: dict[str, str]


class AssignIn(Schema):
    user: str | None = Field(None, description="A username.", max_length=150)
    group: str | None = Field(None, description="A group's name.", max_length=150)
    note: str = Field("", max_length=MAX_NOTE)


class Assignee(Schema):
    kind: Literal["person", "group"]
    name: str


class UnassignIn(Schema):
    note: str = Field("", max_length=MAX_NOTE)


class NoteIn(Schema):
    text: str = Field(min_length=1, max_length=MAX_NOTE)


class AuditEvent(Schema):
    sequence: int
    at: datetime
    kind: str
    actor: str
    env: str
    hold_id: str
    run_id: str
    agent: str
    decision_id: int | None
    item_ids: list[str]
    actions: str
    outcome: str
    summary: str
    channel: str
    payload: dict
    hash: str


class AuditPage(Schema):
    events: list[AuditEvent]
    next: str | None
