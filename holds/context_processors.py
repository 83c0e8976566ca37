from holds import notify, roles


def navigation(request):
    """What the header shows a signed-in user: the pages their roles open, and the bell's count."""
    if not request.user.is_authenticated:
        return {}
    return {
        "unread_notifications": notify.unread_count(request.user),
        "can_review": roles.can_review(request.user),
        "can_audit": roles.can_audit(request.user),
    }
