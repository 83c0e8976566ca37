from django.contrib.auth import views as auth_views
from django.urls import include, path

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(template_name="idp/login.html"), name="login"),
    path("openid/", include("oidc_provider.urls", namespace="oidc_provider")),
]
