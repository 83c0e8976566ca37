from django.urls import path

from notifications import views

urlpatterns = [
    path("", views.inbox, name="notifications"),
    path("bell", views.bell, name="notification-bell"),
    path("read", views.mark_read, name="notifications-read"),
    path("preferences", views.preferences, name="notification-preferences"),
    path("devices", views.add_device, name="push-devices"),
    path("devices/<int:device_id>/remove", views.remove_device, name="push-device-remove"),
    path("devices/<int:device_id>/test", views.test_device, name="push-device-test"),
]
