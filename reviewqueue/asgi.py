import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewqueue.settings")
# Django runs each request's synchronous part in a thread of its own under ASGI: a connection kept open for the next
# request would stay behind in a thread that has ended. Each request opens its own (Django's advice for ASGI).
os.environ.setdefault("DATABASE_CONN_MAX_AGE", "0")
application = get_asgi_application()
