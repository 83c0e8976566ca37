from django.apps import AppConfig


class TestIdentityProviderConfig(AppConfig):
    name = "tests.oidc_provider"
    label = "test_idp"  # "oidc_provider" is django-oidc-provider's own label
