from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from reviewqueue import changes

urlpatterns = [
    path("", include("sso.urls")),  # the sign-in page, with single sign-on when it is on
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("audit/", include("audit.urls")),
    path("notifications/", include("notifications.urls")),
    path("slack/", include("slackapp.urls")),
    path(changes.STREAM_PATH.lstrip("/"), include("live.urls")),
    path("", include("api.urls")),  # /api/v1/ and the API tokens page
    path("remembered/", include("approvals.urls")),
    path("", include("operations.urls")),
    path("", include("webapp.urls")),  # the manifest, the service worker at the root, the offline page
    path("", include("holds.urls")),
]

# A database that cannot be reached answers 503 with a plain page (operations/outage.py); other errors stay 500.
handler500 = "operations.outage.server_error"
