"""The sign-in page with its single sign-on button, and the two ends of the OpenID Connect redirect."""

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import resolve_url
from django.urls import reverse
from django.views.decorators.http import require_safe
from mozilla_django_oidc import views as oidc_views

PASSWORDS_OFF = "Passwords are turned off here: sign in with {provider}."


def sso_context() -> dict:
    return {
        "sso_enabled": settings.SSO_ENABLED,
        "sso_provider_name": getattr(settings, "OIDC_PROVIDER_NAME", ""),
        "local_passwords": settings.LOCAL_PASSWORDS,
    }


class SignInView(auth_views.LoginView):
    """Django's login page, offering single sign-on when it is on, and only that when passwords are off."""

    http_method_names = ["get", "head", "post"]  # Django's form views take a PUT as a POST

    def get_context_data(self, **kwargs):
        return super().get_context_data(**kwargs) | sso_context()

    def post(self, request, *args, **kwargs):
        if settings.LOCAL_PASSWORDS:
            return super().post(request, *args, **kwargs)
        context = self.get_context_data(refusal=PASSWORDS_OFF.format(provider=settings.OIDC_PROVIDER_NAME))
        return self.render_to_response(context, status=403)


@login_not_required
@require_safe
def start(request):
    """Off to the identity provider, with a fresh state, nonce and PKCE verifier kept in the session."""
    if not settings.SSO_ENABLED:
        raise Http404("Single sign-on is off")
    return oidc_views.OIDCAuthenticationRequestView.as_view()(request)


class CallbackView(oidc_views.OIDCAuthenticationCallbackView):
    """Back from the identity provider: signed in, or back on the sign-in page told why not."""

    def login_failure(self):
        refusal = getattr(self.request, "sso_refusal", "")
        messages.error(self.request, refusal or f"Signing in with {settings.OIDC_PROVIDER_NAME} did not work.")
        return HttpResponseRedirect(resolve_url(settings.LOGIN_URL))


@login_not_required
@require_safe
def callback(request):
    if not settings.SSO_ENABLED:
        raise Http404("Single sign-on is off")
    return CallbackView.as_view()(request)


@login_not_required
def admin_sign_in(request):
    """The admin's own login form checks passwords: with passwords off, its visitors go to the sign-in page instead."""
    if settings.LOCAL_PASSWORDS:
        return admin.site.login(request)
    return redirect_to_login(reverse("admin:index"))
