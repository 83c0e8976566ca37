from django.urls import path

from sso import views

urlpatterns = [
    path("login/", views.SignInView.as_view(), name="login"),
    path("admin/login/", views.admin_sign_in),  # before the admin's own, which the project includes after this
    path("sso/start/", views.start, name="sso_start"),
    path("sso/callback/", views.callback, name="sso_callback"),
]
