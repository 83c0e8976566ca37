from django.urls import path

from notifications import views

urlpatterns = [
    path("", views.inbox, name="notifications"),
    path("bell", views.bell, name="notification-bell"),
    path("read", views.mark_read, name="notifications-read"),
    path("preferences", views.preferences, name="notification-preferences"),
]
