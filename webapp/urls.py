from django.urls import path

from webapp import views

app_name = "webapp"
urlpatterns = [
    path("manifest.webmanifest", views.manifest, name="manifest"),
    # At the site's root, so that the worker's scope is the whole site.
    path("service-worker.js", views.service_worker, name="service_worker"),
    path("offline/", views.offline, name="offline"),
]
