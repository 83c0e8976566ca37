from django.urls import URLPattern, path

from api import views
from api.v1 import api

patterns, app_name, namespace = api.urls
for pattern in patterns:
    if isinstance(pattern, URLPattern):
        # The API authenticates every request by its token (or serves its public document): no sign-in page.
        pattern.callback.login_required = False

urlpatterns = [
    path("api/v1/", (patterns, app_name, namespace)),
    path("preferences/api-tokens", views.tokens_page, name="api-tokens"),
]
