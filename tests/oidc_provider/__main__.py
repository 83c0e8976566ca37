"""``python -m tests.oidc_provider COMMAND``: Django's manage.py for the test identity provider."""

import os
import sys

from django.core.management import execute_from_command_line

os.environ["DJANGO_SETTINGS_MODULE"] = "tests.oidc_provider.settings"
execute_from_command_line([f"{sys.executable} -m tests.oidc_provider", *sys.argv[1:]])
