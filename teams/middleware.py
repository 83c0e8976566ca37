from django.utils.functional import SimpleLazyObject

from teams import scopes


class ViewerMiddleware:
    """``request.viewer``: who is asking (``reviewqueue.viewer``), read at its first use, once a request; a request
    that never asks what its user may do or see reads nothing."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request.viewer = SimpleLazyObject(lambda: scopes.viewer_of(request.user))
        return self.get_response(request)
