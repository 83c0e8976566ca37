"""A real OpenID Connect provider for the single sign-on tests: django-oidc-provider in a Django project of its own.

Run it as ``python -m tests.oidc_provider COMMAND`` with ``IDP_DATABASE`` (an SQLite file) and
``IDP_URL`` (its own address) set; ``tests/browser/test_sso_flow.py`` migrates it, makes its signing key,
client and people, and serves it with ``runserver`` on 127.0.0.1.
"""
