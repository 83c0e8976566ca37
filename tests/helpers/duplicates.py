"""What a reviewer who checked a hold's possible duplicates confirms (``holds.related.safeguard``): for the tests
that approve the sample holds, whose four A-1001 refunds are possible duplicates of one another."""

from holds.related import safeguard


def every_duplicate(hold) -> list[str]:
    """The ids of every possible duplicate of ``hold``: ``duplicates_checked`` of a reviewer who may see them all."""
    return list(safeguard.guard(hold).hold_ids)
