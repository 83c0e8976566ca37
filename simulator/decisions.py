"""What makes a decision valid for a hold, and what the resumed agent then answers."""


def decision_problem(hold: dict, body: object) -> str | None:
    """Why `body` is not a valid decision for `hold`, or None if it is.

    The platform wants exactly one entry per item of the hold, each with an action the
    hold allows; an edit carries the item's full data, approve and reject carry none.
    """
    if not isinstance(body, dict):
        return "the decision must be a JSON object"
    if body.get("decided_by") is not None and not isinstance(body["decided_by"], str):
        return "decided_by must be a string"
    entries = body.get("items")
    if not isinstance(entries, list):
        return "items must be a list with one entry per item of the hold"
    for position, entry in enumerate(entries):
        problem = _entry_problem(hold, entry)
        if problem:
            return f"items[{position}]: {problem}"
    return _coverage_problem(hold, entries)


def outcome_answer(hold: dict, entries: list[dict]) -> str:
    """The answer the agent gives after acting on a decision, one sentence per item."""
    titles = {item["id"]: item["title"] for item in hold["items"]}
    sentences = []
    for entry in entries:
        title = titles[entry["id"]]
        match entry["action"]:
            case "approve":
                sentences.append(f"Done: {title}.")
            case "edit":
                sentences.append(f"Done with the reviewer's changes: {title}.")
            case _:
                reason = f" ({entry['comment']})" if entry.get("comment") else ""
                sentences.append(f"Not done: {title}{reason}.")
    return " ".join(sentences)


def _entry_problem(hold: dict, entry: object) -> str | None:
    if not isinstance(entry, dict):
        return "each entry must be an object"
    if not isinstance(entry.get("id"), str):
        return "id must be a string"
    action = entry.get("action")
    if action not in hold["actions"]:
        allowed = ", ".join(hold["actions"])
        return f"action {action!r} is not allowed for this hold (allowed: {allowed})"
    if action == "edit" and not isinstance(entry.get("data"), dict):
        return "edit must carry the item's full data as an object"
    if action != "edit" and "data" in entry:
        return f"{action} must not carry data"
    if entry.get("comment") is not None and not isinstance(entry["comment"], str):
        return "comment must be a string"
    return None


def _coverage_problem(hold: dict, entries: list[dict]) -> str | None:
    expected = [item["id"] for item in hold["items"]]
    seen: set[str] = set()
    for entry in entries:
        item_id = entry["id"]
        if item_id not in expected:
            return f"unknown item id {item_id!r}"
        if item_id in seen:
            return f"duplicate item id {item_id!r}"
        seen.add(item_id)
    missing = [item_id for item_id in expected if item_id not in seen]
    if missing:
        return "missing item ids: " + ", ".join(repr(item_id) for item_id in missing)
    return None
