"""Settings for Review Queue, read from the environment (see the README's table).

Without DATABASE_URL the app uses SQLite and without REDIS_URL Celery uses
kombu's filesystem transport: these embedded defaults exist only so that the
quickstart runs on a fresh machine. Production sets both.
"""

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from reviewqueue import environment as env

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env.string("REVIEWQUEUE_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env.boolean("DEBUG", default=False)
SECRET_KEY = env.string("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "insecure-development-key-only-for-debug"
ALLOWED_HOSTS = env.names("ALLOWED_HOSTS", "localhost,127.0.0.1")
SITE_URL = env.url("SITE_URL", "http://127.0.0.1:8000")
CSRF_TRUSTED_ORIGINS = [SITE_URL]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "holds",
    "audit",
    "simulator",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "reviewqueue.urls"
WSGI_APPLICATION = "reviewqueue.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "holds.context_processors.navigation",
            ],
        },
    },
]


def _database() -> dict:
    database_url = env.string("DATABASE_URL")
    if not database_url:
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "reviewqueue.sqlite3",
            # Web, worker and beat share one file: wait for locks instead of failing,
            # and take the write lock up front so transactions do not deadlock.
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    try:
        return dj_database_url.parse(database_url, conn_max_age=60, conn_health_checks=True)
    except ValueError as error:
        raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {error}") from None


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "queue"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env.string("TIME_ZONE", "UTC")
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
if DEBUG:
    STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = SITE_URL.startswith("https://")
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# The AgentOS platform: holds-api.md. The key is a server-side secret.
AGENTOS_URL = env.url("AGENTOS_URL", "http://127.0.0.1:8765")
AGENTOS_API_KEY = env.string("AGENTOS_API_KEY", "dev-key" if DEBUG else "")
if not AGENTOS_API_KEY:
    raise ImproperlyConfigured("AGENTOS_API_KEY must be set when DEBUG is off")
AGENTOS_ENVS = env.names("AGENTOS_ENVS", "default")
AGENTOS_CONNECT_TIMEOUT = env.seconds("AGENTOS_CONNECT_TIMEOUT", 5.0)
AGENTOS_READ_TIMEOUT = env.seconds("AGENTOS_READ_TIMEOUT", 15.0)
SYNC_INTERVAL_SECONDS = env.integer("SYNC_INTERVAL_SECONDS", 10, minimum=1)

# Celery: Redis in production, a broker folder on disk when REDIS_URL is unset.
REDIS_URL = env.url("REDIS_URL", schemes=("redis", "rediss", "unix"))
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
else:
    CELERY_BROKER_URL = "filesystem://"
    _BROKER_DIR = VAR_DIR / "broker"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR),
        "data_folder_out": str(_BROKER_DIR),
        "processed_folder": str(_BROKER_DIR / "processed"),
        "control_folder": str(_BROKER_DIR / "control"),
        "store_processed": False,
    }
CELERY_TASK_IGNORE_RESULT = True
# A reviewer's request must not hang on a down broker: the decision is stored
# already, and the periodic re-queue sends it once the broker is back.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE = {
    "sync-holds": {"task": "holds.tasks.sync_holds", "schedule": float(SYNC_INTERVAL_SECONDS)},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.string("LOG_LEVEL", "INFO")},
    "loggers": {"httpx": {"level": "WARNING"}, "httpcore": {"level": "WARNING"}},
}

# Reviewing and delivering decisions.
CLAIM_MINUTES = env.integer("CLAIM_MINUTES", 10, minimum=1)
DELIVERY_RETRY_BASE_SECONDS = env.seconds("DELIVERY_RETRY_BASE_SECONDS", 2.0)
DELIVERY_RETRY_MAX_SECONDS = env.seconds("DELIVERY_RETRY_MAX_SECONDS", 300.0)
CELERY_BEAT_SCHEDULE["requeue-decisions"] = {"task": "holds.tasks.requeue_due_decisions", "schedule": 30.0}

# Expiry and notifications.
EXPIRY_SWEEP_SECONDS = env.integer("EXPIRY_SWEEP_SECONDS", 30, minimum=1)
EXPIRY_REMINDER_MINUTES = env.integer("EXPIRY_REMINDER_MINUTES", 15, minimum=1)
NOTIFY_BATCH_SECONDS = env.integer("NOTIFY_BATCH_SECONDS", 60, minimum=1)
DELIVERY_ALERT_MINUTES = env.integer("DELIVERY_ALERT_MINUTES", 10, minimum=1)
NOTIFY_RETRY_LIMIT = env.integer("NOTIFY_RETRY_LIMIT", 5, minimum=1)
WEBHOOK_TIMEOUT_SECONDS = env.seconds("WEBHOOK_TIMEOUT_SECONDS", 5.0)
CELERY_BEAT_SCHEDULE |= {
    "expire-holds": {"task": "holds.tasks.sweep_expiries", "schedule": float(EXPIRY_SWEEP_SECONDS)},
    "new-holds-digest": {"task": "holds.tasks.send_new_holds_digests", "schedule": float(NOTIFY_BATCH_SECONDS)},
    "requeue-notifications": {"task": "holds.tasks.requeue_due_notifications", "schedule": 30.0},
    "alert-undelivered-decisions": {"task": "holds.tasks.alert_undelivered_decisions", "schedule": 60.0},
}

# Email (Django 6.1's MAILERS): SMTP when EMAIL_HOST is set, else printed to the console (the quickstart's worker output).
_email_host = env.string("EMAIL_HOST")
if _email_host:
    _smtp_options = {
        "host": _email_host,
        "port": env.integer("EMAIL_PORT", 25, minimum=1),
        "username": env.string("EMAIL_HOST_USER"),
        "password": env.string("EMAIL_HOST_PASSWORD"),
        "use_tls": env.boolean("EMAIL_USE_TLS", default=False),
        "timeout": env.integer("EMAIL_TIMEOUT", 10, minimum=1),
    }
    MAILERS = {"default": {"BACKEND": "django.core.mail.backends.smtp.EmailBackend", "OPTIONS": _smtp_options}}
else:
    MAILERS = {"default": {"BACKEND": "django.core.mail.backends.console.EmailBackend"}}
DEFAULT_FROM_EMAIL = env.string("DEFAULT_FROM_EMAIL", "Review Queue <review-queue@localhost>")
