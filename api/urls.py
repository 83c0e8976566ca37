from django.urls import URLPattern, path
from django.views.decorators.http import require_safe

from api import views
from api.v1 import api

v1 = api.urls
for pattern in v1[0]:
    if isinstance(pattern, URLPattern):
        if pattern.name in ("openapi-json", "openapi-view", "api-root"):
            # django-ninja's own views answer any method: theirs only read.
            pattern.callback = require_safe(pattern.callback)
        # The API authenticates every request by its token (or serves its public document): no sign-in page.
        pattern.callback.login_required = False

urlpatterns = [
    path("api/v1/", v1),
    path("preferences/api-tokens", views.tokens_page, name="api-tokens"),
]
