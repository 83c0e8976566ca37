from django.urls import path

from approvals import views

urlpatterns = [
    path("", views.remembered, name="remembered"),
    path("revoke", views.revoke, name="remembered-revoke"),
]
