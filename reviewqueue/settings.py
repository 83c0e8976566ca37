"""Settings for Review Queue, read from the environment (see the README's table).

Without DATABASE_URL the app uses SQLite and without REDIS_URL Celery uses
kombu's filesystem transport: these embedded defaults exist only so that the
quickstart runs on a fresh machine. Production sets both.
"""

from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP
from whitenoise.compress import Compressor

from reviewqueue import database_config
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
    "axes",
    "ninja",  # django-ninja's Swagger UI, served from our static files (no CDN)
    "holds",
    "approvals",
    "teams",
    "notifications",
    "audit",
    "operations",
    "people",
    "sso",
    "slackapp",
    "live",
    "api",
    "webapp",
]
if DEBUG:  # the quickstart serves the simulated platform with its ``manage.py runplatform``; production never has it
    INSTALLED_APPS.append("simulator")

MIDDLEWARE = [
    "reviewqueue.forwarded.ForwardedSchemeMiddleware",  # first: before anything asks whether a request is secure
    "operations.middleware.RequestContextMiddleware",  # every log line of a request carries its id
    "api.middleware.ProblemDocumentsMiddleware",  # every error under /api/, whoever answered it, as RFC 9457
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "reviewqueue.middleware.PrivateNoStoreMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "reviewqueue.input_guard.HostileInputMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "teams.middleware.ViewerMiddleware",
    "people.middleware.TimeZoneMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "live.middleware.LiveSinceMiddleware",  # before the view reads what its page shows
    "reviewqueue.middleware.SessionIdleTimeoutMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as axes asks: it turns a lockout into the lockout page
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
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "holds.pages.context_processors.navigation",
                "holds.pages.context_processors.countdowns",
                "holds.pages.context_processors.polling",
                "notifications.context_processors.unread_notifications",
                "live.context_processors.live_stream",
                "webapp.context_processors.theme_colours",
                "reviewqueue.frame.links",
            ],
        },
    },
]


DATABASES = {"default": database_config.from_environment(VAR_DIR)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "queue"
LOGOUT_REDIRECT_URL = "login"

# The sign-in brake (reviewqueue/signin.py): django-axes refuses sign-ins on both login forms, even with the
# right password, for a while after too many failures for one username or from one client address.
# It counts and refuses password sign-ins only: single sign-on's failures are the provider's to brake.
AUTHENTICATION_BACKENDS = ["reviewqueue.signin.PasswordBackend", "django.contrib.auth.backends.ModelBackend"]
SIGN_IN_FAILURE_LIMIT = env.integer("SIGN_IN_FAILURE_LIMIT", 5, minimum=1)
SIGN_IN_LOCKOUT_MINUTES = env.integer("SIGN_IN_LOCKOUT_MINUTES", 15, minimum=1)
AXES_FAILURE_LIMIT = SIGN_IN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(minutes=SIGN_IN_LOCKOUT_MINUTES)
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
# Attempts refused during a lockout are not counted: the lockout ends on time, and a client hammering
# a locked form adds nothing to axes' table (which prunes attempts older than the lockout itself).
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_DISABLE_ACCESS_LOG = True  # the audit trail records successful sign-ins
# Not in the admin: its list would pass a malformed address in the query string to PostgreSQL's inet type (a 500).
# `manage.py axes_reset_username NAME` or `axes_reset_ip ADDRESS` lifts a lockout early.
AXES_ENABLE_ADMIN = False
AXES_HANDLER = "reviewqueue.signin.AttemptsHandler"
AXES_CLIENT_IP_CALLABLE = "reviewqueue.forwarded.client_ip"
AXES_LOCKOUT_CALLABLE = "reviewqueue.signin.locked_out"
AXES_VERBOSE = False  # no banner on every start of every process
# Your proxies' addresses or networks: only a request from one of them has its X-Forwarded-For and X-Forwarded-Proto
# read (reviewqueue/forwarded.py). Empty: no forwarded header is read, as anyone can write one.
TRUSTED_PROXIES = env.networks("TRUSTED_PROXIES", everything=False)
env.retired("TRUSTED_PROXY_COUNT", "list your proxies' addresses or networks in TRUSTED_PROXIES instead")
# Who may read /metrics (operations/access.py): a bearer token, or client addresses; with neither it is a 404.
METRICS_TOKEN = env.string("METRICS_TOKEN")
METRICS_ALLOWED_IPS = env.networks("METRICS_ALLOWED_IPS")

# Single sign-on with OpenID Connect (sso/, mozilla-django-oidc), on when OIDC_RP_CLIENT_ID is set: the README's
# "Single sign-on" explains each variable. State, nonce and PKCE are always checked; the secret comes only from here.
OIDC_RP_CLIENT_ID = env.string("OIDC_RP_CLIENT_ID")
SSO_ENABLED = bool(OIDC_RP_CLIENT_ID)
LOCAL_PASSWORDS = env.boolean("LOCAL_PASSWORDS", default=True)
if not LOCAL_PASSWORDS and not SSO_ENABLED:
    raise ImproperlyConfigured(
        "LOCAL_PASSWORDS=false needs single sign-on: set OIDC_RP_CLIENT_ID and the other OIDC_ variables"
    )
if SSO_ENABLED:
    OIDC_RP_CLIENT_SECRET = env.string("OIDC_RP_CLIENT_SECRET")
    OIDC_OP_ISSUER = env.url("OIDC_OP_ISSUER")
    OIDC_OP_AUTHORIZATION_ENDPOINT = env.url("OIDC_OP_AUTHORIZATION_ENDPOINT")
    OIDC_OP_TOKEN_ENDPOINT = env.url("OIDC_OP_TOKEN_ENDPOINT")
    OIDC_OP_USER_ENDPOINT = env.url("OIDC_OP_USER_ENDPOINT")
    OIDC_OP_JWKS_ENDPOINT = env.url("OIDC_OP_JWKS_ENDPOINT")
    _endpoints = [f"OIDC_OP_{name}_ENDPOINT" for name in ("AUTHORIZATION", "TOKEN", "USER", "JWKS")]
    for _required in ["OIDC_RP_CLIENT_SECRET", "OIDC_OP_ISSUER", *_endpoints]:
        if not globals()[_required]:
            raise ImproperlyConfigured(f"{_required} must be set when OIDC_RP_CLIENT_ID is")
    _signing = ("rs256", "rs384", "rs512", "ps256", "ps384", "ps512", "es256", "es384", "es512")
    OIDC_RP_SIGN_ALGO = env.choice("OIDC_RP_SIGN_ALGO", _signing, "rs256").upper()
    OIDC_RP_SCOPES = " ".join(env.names("OIDC_RP_SCOPES", "openid,email,profile"))
    if "openid" not in OIDC_RP_SCOPES.split():
        raise ImproperlyConfigured("OIDC_RP_SCOPES must include openid")
    OIDC_TIMEOUT = env.seconds("OIDC_TIMEOUT", 10.0)
    OIDC_USE_NONCE = True
    OIDC_USE_PKCE = True
    OIDC_AUTHENTICATION_CALLBACK_URL = "sso_callback"
    OIDC_PROVIDER_NAME = env.string("OIDC_PROVIDER_NAME", "single sign-on")
    OIDC_USERNAME_CLAIM = env.string("OIDC_USERNAME_CLAIM", "preferred_username")
    OIDC_ROLE_CLAIM = env.string("OIDC_ROLE_CLAIM", "groups")
    OIDC_REVIEWER_GROUPS = env.names("OIDC_REVIEWER_GROUPS", "", required=False)
    OIDC_AUDITOR_GROUPS = env.names("OIDC_AUDITOR_GROUPS", "", required=False)
    OIDC_LINK_VERIFIED_EMAIL = env.boolean("OIDC_LINK_VERIFIED_EMAIL", default=False)
    # Before axes: the sign-in brake guards our password form, the identity provider guards its own.
    AUTHENTICATION_BACKENDS.insert(0, "sso.backend.SingleSignOnBackend")
if not LOCAL_PASSWORDS:
    # No backend checks a password any more, on our form or the admin's; sessions signed in with one end.
    AUTHENTICATION_BACKENDS.remove("django.contrib.auth.backends.ModelBackend")

# A session nobody has used for this long is signed out (reviewqueue/middleware.py).
SESSION_IDLE_MINUTES = env.integer("SESSION_IDLE_MINUTES", 8 * 60, minimum=1)
SESSION_COOKIE_AGE = SESSION_IDLE_MINUTES * 60

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
# Pages name static files by their hashed names, and only developer tools read source maps: compressing the unhashed
# copies and the API docs' maps was most of collectstatic's time (a deploy's, the image build's).
WHITENOISE_KEEP_ONLY_HASHED_FILES = True
WHITENOISE_SKIP_COMPRESS_EXTENSIONS = (*Compressor.SKIP_COMPRESS_EXTENSIONS, "map")
if DEBUG:
    STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}

SESSION_COOKIE_HTTPONLY = True
_HTTPS = SITE_URL.startswith("https://")
SESSION_COOKIE_SECURE = _HTTPS
CSRF_COOKIE_SECURE = _HTTPS
SECURE_SSL_REDIRECT = _HTTPS
SECURE_HSTS_SECONDS = env.integer("SECURE_HSTS_SECONDS", 365 * 24 * 3600 if _HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.boolean("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env.boolean("SECURE_HSTS_PRELOAD", default=False)
SILENCED_SYSTEM_CHECKS = []
if not SECURE_HSTS_PRELOAD:
    # Asking browsers to preload HSTS is for the owner of the whole domain to decide, not for this app.
    SILENCED_SYSTEM_CHECKS.append("security.W021")
# The header a TLS-terminating proxy sets to "https", read from TRUSTED_PROXIES only. Django reads the scheme from a
# request.META key no client can send, which reviewqueue.forwarded.ForwardedSchemeMiddleware alone writes.
PROXY_HTTPS_HEADER = env.header("PROXY_HTTPS_HEADER", "X-Forwarded-Proto")
SECURE_PROXY_SSL_HEADER = ("reviewqueue.forwarded_scheme", "https")
# The probes answer over plain HTTP: an orchestrator's probe reaches the app directly, not through the proxy.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# No inline script or style runs: the app's own are static files, and the admin's inline ones carry the nonce.
# base.html turns off htmx's eval and its injected indicator <style>.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF, CSP.NONCE],
    "img-src": [CSP.SELF, "data:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

# The AgentOS platform: holds-api.md. The key is a server-side secret.
AGENTOS_URL = env.url("AGENTOS_URL", "http://127.0.0.1:8765")
AGENTOS_API_KEY = env.string("AGENTOS_API_KEY", "dev-key" if DEBUG else "")
if not AGENTOS_API_KEY:
    raise ImproperlyConfigured("AGENTOS_API_KEY must be set when DEBUG is off")
AGENTOS_ENVS = env.names("AGENTOS_ENVS", "default")
AGENTOS_CONNECT_TIMEOUT = env.seconds("AGENTOS_CONNECT_TIMEOUT", 5.0)
AGENTOS_READ_TIMEOUT = env.seconds("AGENTOS_READ_TIMEOUT", 15.0)
SYNC_INTERVAL_SECONDS = env.integer("SYNC_INTERVAL_SECONDS", 10, minimum=1)
# Every interval sync lists only the tail of each env's listing; a reconciling walk of the whole
# listing, spread page by page over this period, finds the holds that ended or changed elsewhere.
SYNC_RECONCILE_MINUTES = env.integer("SYNC_RECONCILE_MINUTES", 5, minimum=1)
# The platform's page of a run, e.g. https://agentos.example.com/envs/{env}/runs/{run_id}; unset: run ids are not links.
RUN_URL_TEMPLATE = env.url_template("RUN_URL_TEMPLATE", ("env", "run_id"), required=("run_id",))
# The item data keys naming the currency of its amounts (a Python setting, like EDIT_RULES).
CURRENCY_KEYS = ["currency"]

# Celery: Redis in production, a broker folder on disk when REDIS_URL is unset.
REDIS_URL = env.url("REDIS_URL", schemes=("redis", "rediss", "unix"))
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    # Far longer than any retry's countdown, or Redis would hand a waiting retry to a second worker.
    # A task that died with its worker is not waited for: the periodic re-queues send it again.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
    # Shared by every web process: the queue's rendered rows (holds/queue/rows.py), which each
    # process also keeps (reviewqueue/softcache.py). Without REDIS_URL only that copy is kept,
    # which is as correct, only colder.
    CACHES = {"default": {"BACKEND": "reviewqueue.rediscache.RedisCache", "LOCATION": REDIS_URL}}
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
# A reviewer's request must not hang on a down broker: the decision is stored, beat's re-queue sends it later.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
# The worker and beat outlive their broker: a lost connection is retried with Celery's backoff (2 s more each
# time, up to 30 s) for ever, at startup too, and the worker consumes again once Redis is back. What Redis lost
# is queued again by beat's re-queues from the rows in PostgreSQL.
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Beat keeps its schedule in memory, so it needs no writable directory: every periodic task here
# catches up with whatever it missed, so after a restart each simply runs one interval later.
CELERY_BEAT_SCHEDULER = "celery.beat:Scheduler"
CELERY_BEAT_SCHEDULE = {
    "sync-holds": {"task": "holds.tasks.sync_holds", "schedule": float(SYNC_INTERVAL_SECONDS)},
    "reread-subjects": {"task": "holds.tasks.reread_subjects", "schedule": 60.0},  # one an admin's change lost
    "mark-shared-holds": {"task": "holds.tasks.mark_shared_holds", "schedule": 3600.0},  # holds/related/sharing.py
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "operations.logformat.JsonFormatter"},
    },
    # The request, user, hold, decision and task a line is about (operations/logcontext.py), for the JSON format.
    "filters": {"context": {"()": "operations.logcontext.ContextFilter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": env.choice("LOG_FORMAT", ("plain", "json"), "plain"),
            "filters": ["context"],
        }
    },
    "root": {"handlers": ["console"], "level": env.string("LOG_LEVEL", "INFO")},
    # axes logs every sign-in at INFO; its warnings (each failure, each lockout) are the ones worth keeping.
    "loggers": {"httpx": {"level": "WARNING"}, "httpcore": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}

# Reviewing and delivering decisions.
CLAIM_MINUTES = env.integer("CLAIM_MINUTES", 10, minimum=1)
UNDO_SECONDS = env.integer("UNDO_SECONDS", 10)  # 0: no undo window, a decision is sent at once
# The longest a reviewer may remember an approval for (approvals/remembering.py); 0 turns remembering off.
REMEMBER_MAX_HOURS = env.integer("REMEMBER_MAX_HOURS", 7 * 24)
# How far back related holds and possible duplicates look for holds decided (holds/related/related.py).
RELATED_WINDOW_DAYS = env.integer("RELATED_WINDOW_DAYS", 30, minimum=1)
DELIVERY_RETRY_BASE_SECONDS = env.seconds("DELIVERY_RETRY_BASE_SECONDS", 2.0)
DELIVERY_RETRY_MAX_SECONDS = env.seconds("DELIVERY_RETRY_MAX_SECONDS", 300.0)
# How soon what a lost task was to send is sent again (reviewqueue/backoff.py): a decision or notification this long
# past its due time or lease counts as lost (Redis lost its task, or its worker died), and beat looks for such
# decisions this often. Short, so that a lost delivery is re-sent within a minute; a needless re-queue is harmless.
REQUEUE_SECONDS = env.seconds("REQUEUE_SECONDS", 10.0)
CELERY_BEAT_SCHEDULE["requeue-decisions"] = {"task": "holds.tasks.requeue_due_decisions", "schedule": REQUEUE_SECONDS}

# The API (api/): requests a token may make a minute before it is answered 429 (counted in the cache, Redis).
API_RATE_PER_MINUTE = env.integer("API_RATE_PER_MINUTE", 120, minimum=1)

# Expiry and notifications.
EXPIRY_SWEEP_SECONDS = env.integer("EXPIRY_SWEEP_SECONDS", 30, minimum=1)
EXPIRY_REMINDER_MINUTES = env.integer("EXPIRY_REMINDER_MINUTES", 15, minimum=1)
NOTIFY_BATCH_SECONDS = env.integer("NOTIFY_BATCH_SECONDS", 60, minimum=1)
DELIVERY_ALERT_MINUTES = env.integer("DELIVERY_ALERT_MINUTES", 10, minimum=1)
NOTIFY_RETRY_LIMIT = env.integer("NOTIFY_RETRY_LIMIT", 5, minimum=1)
WEBHOOK_TIMEOUT_SECONDS = env.seconds("WEBHOOK_TIMEOUT_SECONDS", 5.0)
WEBHOOK_ALLOWED_NETWORKS = env.networks("WEBHOOK_ALLOWED_NETWORKS")  # see notifications/destinations.py
# The Slack app (slackapp/): its signing secret turns on interactive buttons and POST /slack/interactivity; the bot
# token, optional, lets messages be posted with chat.postMessage and updated in place, and Reject ask for a reason.
SLACK_SIGNING_SECRET = env.string("SLACK_SIGNING_SECRET")
SLACK_BOT_TOKEN = env.string("SLACK_BOT_TOKEN")
SLACK_API_URL = env.url("SLACK_API_URL", "https://slack.com/api")
# A Slack link made before links were proven (slackapp.linking) decides nothing while this is on.
SLACK_REQUIRE_VERIFIED_LINKS = env.boolean("SLACK_REQUIRE_VERIFIED_LINKS", default=True)
# Web Push (notifications/push.py, docs/operating.md): off without both VAPID keys (`manage.py makevapidkeys`).
WEBPUSH_VAPID_PUBLIC_KEY = env.string("WEBPUSH_VAPID_PUBLIC_KEY")
WEBPUSH_VAPID_PRIVATE_KEY = env.string("WEBPUSH_VAPID_PRIVATE_KEY")
WEBPUSH_CONTACT = env.string("WEBPUSH_CONTACT", SITE_URL)
WEBPUSH_PAYLOAD = env.choice("WEBPUSH_PAYLOAD", ("minimal", "summary"), "minimal")
WEBPUSH_ALLOWED_NETWORKS = env.networks("WEBPUSH_ALLOWED_NETWORKS")  # as WEBHOOK_ALLOWED_NETWORKS, for push services
# Rows kept only for a while: Idempotency-Keys for a day, Slack connect links and closed holds' messages after that.
CELERY_BEAT_SCHEDULE |= {
    "forget-idempotency-keys": {"task": "api.tasks.forget_old_idempotency_keys", "schedule": 3600.0},
    "forget-finished-slack-rows": {"task": "slackapp.tasks.forget_finished", "schedule": 3600.0},
}
CELERY_BEAT_SCHEDULE |= {
    "expire-holds": {"task": "holds.tasks.sweep_expiries", "schedule": float(EXPIRY_SWEEP_SECONDS)},
    "new-holds-digest": {"task": "notifications.tasks.send_new_holds_digests", "schedule": float(NOTIFY_BATCH_SECONDS)},
    "requeue-notifications": {"task": "notifications.tasks.requeue_due_notifications", "schedule": 30.0},
    "alert-undelivered-decisions": {"task": "holds.tasks.alert_undelivered_decisions", "schedule": 60.0},
}
# The whole audit chain is walked hourly, its outcome kept for /metrics and the alert on a broken chain.
CELERY_BEAT_SCHEDULE["verify-audit-chain"] = {"task": "operations.tasks.verify_audit_chain", "schedule": 3600.0}
# Holds waiting past their policy's limits go to its group (approvals/escalation.py) within a sync interval.
ESCALATION_SWEEP_SECONDS = env.integer("ESCALATION_SWEEP_SECONDS", SYNC_INTERVAL_SECONDS, minimum=1)
CELERY_BEAT_SCHEDULE["escalate-holds"] = {
    "task": "approvals.tasks.escalate_waiting_holds",
    "schedule": float(ESCALATION_SWEEP_SECONDS),
}
# Policies needing 0 people approve their holds, and default outcomes are sent, by periodic sweeps
# (holds/deciding/by_policy.py): each goes out up to this long after its time.
POLICY_SWEEP_SECONDS = env.integer("POLICY_SWEEP_SECONDS", 15, minimum=1)
CELERY_BEAT_SCHEDULE |= {
    "approve-due-holds": {"task": "holds.tasks.approve_due_holds", "schedule": float(POLICY_SWEEP_SECONDS)},
    "send-default-outcomes": {"task": "holds.tasks.send_default_outcomes", "schedule": float(POLICY_SWEEP_SECONDS)},
}

# Email (Django 6.1's MAILERS): SMTP to EMAIL_HOST, or printed to the console (the worker's output), which is
# the default only with DEBUG on: in production it must be chosen with EMAIL_BACKEND=console.
_email_host = env.string("EMAIL_HOST")
_email_backend = env.choice("EMAIL_BACKEND", ("smtp", "console"), "smtp" if _email_host or not DEBUG else "console")
if _email_backend == "smtp" and not _email_host:
    raise ImproperlyConfigured("EMAIL_HOST must be set for SMTP mail (or EMAIL_BACKEND=console to print it)")
if _email_backend == "smtp":
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
    SILENCED_SYSTEM_CHECKS.append("mail.E001")  # console mail was chosen, not fallen into
DEFAULT_FROM_EMAIL = env.string("DEFAULT_FROM_EMAIL", "Review Queue <review-queue@localhost>")

# Live updates (reviewqueue/changes.py, live/): pages told of changes over server-sent events, polling otherwise.
LIVE_EVENTS = env.boolean("LIVE_EVENTS", default=True)
LIVE_HEARTBEAT_SECONDS = env.seconds("LIVE_HEARTBEAT_SECONDS", 15.0)
# A stream ends after this long and the page reconnects at once, so a changed scope or a signed-out session counts.
LIVE_STREAM_SECONDS = env.seconds("LIVE_STREAM_SECONDS", 300.0)
# Beyond these a page polls: of a browser's six HTTP/1.1 connections to a site, four tabs' streams leave two for pages.
LIVE_STREAMS_PER_SESSION = env.integer("LIVE_STREAMS_PER_SESSION", 4, minimum=1)
# A person's sessions together: one person's many sessions cannot take every place a process has.
LIVE_STREAMS_PER_PERSON = env.integer("LIVE_STREAMS_PER_PERSON", 8, minimum=1)
LIVE_STREAMS_PER_PROCESS = env.integer("LIVE_STREAMS_PER_PROCESS", 2000, minimum=1)
