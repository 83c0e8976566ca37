from holds import notify


def unread_notifications(request):
    """The bell's count, on every page of a signed-in user."""
    if not request.user.is_authenticated:
        return {}
    return {"unread_notifications": notify.unread_count(request.user)}
