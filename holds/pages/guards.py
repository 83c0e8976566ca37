"""What every page of a hold checks first: the Reviewers role, the hold within the viewer's team scopes (a 404
otherwise, so that an id reveals nothing), and a posted id (a 400 that says what is missing)."""

from django.shortcuts import get_object_or_404

from holds.models import Hold
from reviewqueue import readers, roles
from teams import scopes

reviewer_required = roles.required(roles.can_review, "Deciding holds needs the Reviewers role.")


def posted_id(request, name: str, missing: str) -> int:
    """The database id the form posted as ``name``; a 400 that says ``missing`` when it posted none."""
    found = readers.identifier(request.POST.get(name, ""), name)
    if found is None:
        raise readers.BadValue(name, missing)
    return found


def hold_or_404(request, pk, holds=Hold.objects):
    """The hold ``pk`` of ``holds``; 404 when there is none, or when it is out of the reviewer's team
    scopes, so that an id reveals nothing."""
    return get_object_or_404(scopes.visible(holds.all(), request.viewer), pk=pk)
