from django.urls import path

from holds import views

urlpatterns = [
    path("", views.queue, name="queue"),
]
