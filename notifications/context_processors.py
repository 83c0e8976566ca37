from notifications import notify


def unread_notifications(request):
    """The bell's count in the header of every page a signed-in user sees."""
    if not request.user.is_authenticated:
        return {}
    return {"unread_notifications": notify.unread_count(request.user)}
