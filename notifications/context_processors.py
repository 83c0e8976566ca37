from django.utils.functional import SimpleLazyObject

from notifications import in_app


def unread_notifications(request):
    """The bell's count in the header of every page a signed-in user sees.

    Counted only when a template shows the bell: an htmx fragment (the queue's
    refresh every few seconds, say) renders without the header and costs no query.
    """
    if not request.user.is_authenticated:
        return {}
    return {"unread_notifications": SimpleLazyObject(lambda: in_app.unread_count(request.viewer))}
