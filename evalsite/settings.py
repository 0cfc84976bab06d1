"""EvalSite settings. Everything comes from the environment (see ``.env.example``).

With nothing set, EvalSite runs as the embedded default: SQLite in ``var/``, DEBUG on, a secret key
generated once into ``var/secret_key`` and Celery on a file-system broker, so background work needs
no server. ``DATABASE_URL`` switches to PostgreSQL, ``CELERY_BROKER_URL`` to Redis and
``EVALSITE_ENV=production`` demands ``SECRET_KEY`` and ``ALLOWED_HOSTS`` and turns DEBUG off.
"""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from evalsite.env import Env, local_secret_key, prepare_threshold, production_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent
env = Env.from_os()

# Local state of the embedded default (database, secret key, broker folders); git-ignored.
VAR_DIR = Path(env.string("EVALSITE_VAR_DIR", str(BASE_DIR / "var")))

ENVIRONMENT = env.choice("EVALSITE_ENV", ("development", "production"), "development")
PRODUCTION = ENVIRONMENT == "production"

if PRODUCTION:
    SECRET_KEY = production_secret_key(
        env.required_string("SECRET_KEY", "when EVALSITE_ENV=production")
    )
    ALLOWED_HOSTS = env.string_list("ALLOWED_HOSTS")
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured("ALLOWED_HOSTS must be set when EVALSITE_ENV=production.")
    DEBUG = env.boolean("DEBUG", False)
else:
    SECRET_KEY = env.string("SECRET_KEY") or local_secret_key(VAR_DIR / "secret_key")
    ALLOWED_HOSTS = env.string_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
    DEBUG = env.boolean("DEBUG", True)

CSRF_TRUSTED_ORIGINS = env.string_list("CSRF_TRUSTED_ORIGINS")
if PRODUCTION:
    # Behind the TLS-terminating proxy that sets X-Forwarded-Proto (docs/deployment.md). With
    # SECURE_COOKIES=0 (trying the stack over plain HTTP) the redirect and HSTS follow it off.
    SESSION_COOKIE_SECURE = env.boolean("SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    # /healthz answers before this redirect (its middleware comes first), so plain-HTTP health
    # checks keep working.
    SECURE_SSL_REDIRECT = env.boolean("SECURE_SSL_REDIRECT", SESSION_COOKIE_SECURE)
    # Browsers remember HSTS for this long: an hour by default, so a mistake wears off; raise it
    # to a year (31536000) once HTTPS is there for good. The preload list only accepts a year on
    # a registrable domain, so the preload flag does nothing until both hold.
    SECURE_HSTS_SECONDS = env.integer(
        "SECURE_HSTS_SECONDS", 3600 if SESSION_COOKIE_SECURE else 0, minimum=0
    )
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.boolean("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env.boolean("SECURE_HSTS_PRELOAD", True)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "annotation",
    "metrics",
]

MIDDLEWARE = [
    # First: /healthz answers before the Host check, so a container healthcheck on 127.0.0.1
    # works whatever ALLOWED_HOSTS says.
    "evalsite.middleware.HealthCheckMiddleware",
    # A view that cannot reach the database answers 503 with a message (JSON under /api/).
    "evalsite.middleware.DatabaseUnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # The Content-Security-Policy below on every answer (pages, API, admin, errors).
    "evalsite.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

if PRODUCTION:
    # gunicorn serves the collected static files itself (runserver does it in development).
    MIDDLEWARE.insert(2, "whitenoise.middleware.WhiteNoiseMiddleware")

# Content-Security-Policy (evalsite/csp.py): scripts, styles, fonts and fetches only from this
# site, no inline script or style (data reaches scripts through data-* attributes and json_script),
# no plugins, no <base> elsewhere, forms post here only, and no site may frame a page (as
# X-Frame-Options: DENY says to older browsers). data: images: plotly draws a heatmap as a PNG
# data URI, and Swagger UI's stylesheet has its icons as SVG data URIs; blob: images: a plot's
# "download as PNG" button draws the plot from a blob URL of its SVG.
EVALSITE_CSP: dict[str, list[str]] = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:", "blob:"],
    "font-src": ["'self'"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}
# Laid over it on DRF's browsable API pages only: DRF's page template floats its "Extra Actions"
# and "Filters" buttons (and lays out nested forms) with style attributes. Style attributes only;
# inline <style> elements and every script stay refused there too.
EVALSITE_CSP_BROWSABLE_API: dict[str, list[str]] = {"style-src-attr": ["'unsafe-inline'"]}
# Laid over it on the campaign dashboard only: plotly sets two style attributes there, allowed by
# their hashes alone (no other style attribute is): an empty one on a colour bar's rectangles,
# and "image-rendering: pixelated" (with its vendor forms) on a heatmap it draws one pixel a cell
# (which the browser would otherwise smooth into a blur). tests/browser/test_plotly_css.py checks
# them against the installed plotly.
EVALSITE_CSP_DASHBOARD: dict[str, list[str]] = {
    "style-src-attr": [
        "'unsafe-hashes'",
        "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='",
        "'sha256-AR/cKIZjWPcPmBUPDA6oti9XBiTbJvz0Cro2J1VzzS8='",
    ]
}

ROOT_URLCONF = "evalsite.urls"
WSGI_APPLICATION = "evalsite.wsgi.application"

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
                "django.template.context_processors.i18n",
            ],
            # ``{% load numbers %}``: the one number formatter of pages (evalsite/formatting.py).
            "libraries": {"numbers": "evalsite.template_numbers"},
        },
    },
]

DATABASES = {"default": env.database("DATABASE_URL", VAR_DIR / "db.sqlite3")}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    # The embedded default shares the file between the web process and the worker.
    DATABASES["default"]["OPTIONS"] = {"timeout": 30, "transaction_mode": "IMMEDIATE"}
else:
    # A persistent connection (conn_max_age in DATABASE_URL) is tested before a request reuses
    # it, so after a PostgreSQL restart no request fails on a dead one; connecting gives up after
    # 5 s (a request answers 503 rather than waiting for the kernel's minutes-long TCP timeout).
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", 5)
    # The annotation hot path's fixed queries (evalsite/db/rawsql.py) are prepared by each
    # connection the second time it runs them; every other query uses client-side binding and is
    # never prepared. A transaction-pooling PgBouncer in between needs this off:
    # ?prepare_threshold=off in DATABASE_URL.
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = prepare_threshold(
        DATABASES["default"]["OPTIONS"].get("prepare_threshold", 1), variable="DATABASE_URL"
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("de", "Deutsch")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env.time_zone("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "evalsite.staticfinders.PackageFileFinder",
]
# Single files served from installed packages (never a CDN, never a copy in the repository):
# the dashboard's plots use plotly's bundled JavaScript.
EVALSITE_PACKAGE_STATIC = {"plotly/plotly.min.js": ("plotly", "package_data/plotly.min.js")}
STATIC_ROOT = Path(env.string("STATIC_ROOT", str(VAR_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

# Uploads: files above this size are refused with an error naming the file.
EVALSITE_UPLOAD_MAX_BYTES = env.integer("EVALSITE_UPLOAD_MAX_BYTES", 50 * 1024 * 1024, minimum=1)
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FILES = env.integer("EVALSITE_UPLOAD_MAX_FILES", 500, minimum=1)

# Login rate limiting (evalsite/ratelimit.py): this many failed logins for one username, or from
# one client address, within the window refuse further attempts with 429 until it has passed.
# Behind EVALSITE_PROXY_COUNT proxies that append to X-Forwarded-For, the client address is the
# entry the outermost one appended; with 0, X-Forwarded-For is ignored.
EVALSITE_LOGIN_FAILURES_PER_USER = env.integer("EVALSITE_LOGIN_FAILURES_PER_USER", 5, minimum=1)
EVALSITE_LOGIN_FAILURES_PER_IP = env.integer("EVALSITE_LOGIN_FAILURES_PER_IP", 50, minimum=1)
EVALSITE_LOGIN_WINDOW_SECONDS = env.integer("EVALSITE_LOGIN_WINDOW_SECONDS", 15 * 60, minimum=1)
EVALSITE_PROXY_COUNT = env.integer("EVALSITE_PROXY_COUNT", 0, minimum=0)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: an anonymous API call gets 401 with a WWW-Authenticate header.
        "evalsite.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON that no view can use (nested too deep, 1e400, NaN, a NUL) is refused with 400 there.
    "DEFAULT_PARSER_CLASSES": [
        "evalsite.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # DRF's negotiation, with a shortcut for the Accept headers API clients send.
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "evalsite.negotiation.ContentNegotiation",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "EvalSite API",
    "DESCRIPTION": "Campaigns, uploads and contents of EvalSite, the MT human-evaluation tool.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI's assets come from the drf-spectacular-sidecar package, never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The error answers of every operation (evalsite/schema.py), after the default hook.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "evalsite.schema.error_responses",
    ],
}

# Celery. Seconds: the soft limit raises inside a task, the hard limit kills its process.
CELERY_TASK_SOFT_TIME_LIMIT = env.integer("CELERY_TASK_SOFT_TIME_LIMIT", 30 * 60, minimum=1)
CELERY_TASK_TIME_LIMIT = env.integer("CELERY_TASK_TIME_LIMIT", 35 * 60, minimum=1)
if CELERY_TASK_TIME_LIMIT <= CELERY_TASK_SOFT_TIME_LIMIT:
    raise ImproperlyConfigured("CELERY_TASK_TIME_LIMIT must exceed CELERY_TASK_SOFT_TIME_LIMIT.")

# Processes per Celery worker (the compose worker service; `manage.py serve` passes its own):
# a dedicated worker machine wants about one per CPU core. Scaling out is more workers on more
# machines, all on the same Redis and PostgreSQL.
CELERY_WORKER_CONCURRENCY = env.integer("CELERY_WORKER_CONCURRENCY", 2, minimum=1)

# Unset broker: a file-system transport under var/, so `make run` needs no server. (The host
# names nothing, but without one kombu warns "No hostname was supplied" on every connection.)
CELERY_BROKER_URL = env.url(
    "CELERY_BROKER_URL", "filesystem://localhost/", schemes=("redis", "filesystem")
)
CELERY_EMBEDDED_BROKER = CELERY_BROKER_URL.startswith("filesystem://")
if CELERY_EMBEDDED_BROKER:
    _broker_dir = VAR_DIR / "broker"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
    CELERY_RESULT_BACKEND = env.string(
        "CELERY_RESULT_BACKEND", f"file://{(VAR_DIR / 'celery-results').as_posix()}"
    )
    # kombu's file-system transport and Celery's file backend expect their folders to exist.
    for _folder in ("queue", "processed", "control"):
        (_broker_dir / _folder).mkdir(parents=True, exist_ok=True)
    (VAR_DIR / "celery-results").mkdir(parents=True, exist_ok=True)
else:
    # A message not acknowledged within this time (its worker died) is delivered again — also
    # when its task is merely still running, to a second worker. So it must exceed the hard time
    # limit, after which no task runs; by default by five minutes.
    CELERY_VISIBILITY_TIMEOUT = env.integer(
        "CELERY_VISIBILITY_TIMEOUT", CELERY_TASK_TIME_LIMIT + 300, minimum=1
    )
    if CELERY_VISIBILITY_TIMEOUT <= CELERY_TASK_TIME_LIMIT:
        raise ImproperlyConfigured(
            f"CELERY_VISIBILITY_TIMEOUT ({CELERY_VISIBILITY_TIMEOUT} s) must exceed "
            f"CELERY_TASK_TIME_LIMIT ({CELERY_TASK_TIME_LIMIT} s): Redis would deliver a task "
            "that is still running to a second worker."
        )
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": CELERY_VISIBILITY_TIMEOUT,
        # Fail fast when Redis is down: a web request must never hang on the broker. kombu
        # otherwise retries a publishing connection with sleeps adding up to seconds; workers keep
        # their own, patient reconnection for consuming.
        "socket_connect_timeout": 2,
        "socket_timeout": 5,
        "max_retries": 2,
        "interval_start": 0,
        "interval_step": 0.2,
        "interval_max": 0.5,
    }
    CELERY_RESULT_BACKEND = env.string("CELERY_RESULT_BACKEND", CELERY_BROKER_URL)
# The cache holds the once-a-minute debounce of automatic recomputation, shared by all processes:
# Redis beside the broker, or files in var/ for the embedded default.
if CELERY_EMBEDDED_BROKER:
    CACHES: dict[str, dict[str, object]] = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": env.string("CACHE_URL", CELERY_BROKER_URL),
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }

# Background analysis: segments per statistics chunk (a chunk covers every system and run), and
# whether new judgments and uploads schedule a recomputation (at most once per minute).
EVALSITE_CHUNK_SEGMENTS = env.integer("EVALSITE_CHUNK_SEGMENTS", 250, minimum=1)
EVALSITE_AUTO_ANALYSIS = env.boolean("EVALSITE_AUTO_ANALYSIS", True)
EVALSITE_ANALYSIS_DEBOUNCE_SECONDS = env.integer(
    "EVALSITE_ANALYSIS_DEBOUNCE_SECONDS", 60, minimum=0
)
# The analysis pages show the stored human analysis while it is fresh; a campaign of at most this
# many judgment values (analysed in well under a second) is analysed in the request when it is
# not, a larger one shows the stored result as out of date until its recomputation ends.
EVALSITE_ANALYSIS_LIVE_VALUES = env.integer("EVALSITE_ANALYSIS_LIVE_VALUES", 30_000, minimum=0)
# A queued or running analysis job that has not moved for this long is taken for dead (its
# message lost, its worker gone for good): "recompute now" and automatic scheduling mark it failed
# and start a new one. A healthy job moves at least once per task; a task ends within the hard time
# limit, or — its worker died — is delivered again after the visibility timeout (Redis) and then
# ends within the hard limit. So the limit must exceed both together; by default two hours, or
# the visibility timeout plus twice the hard limit if that is more.
_LONGEST_SILENCE = CELERY_TASK_TIME_LIMIT + (
    0 if CELERY_EMBEDDED_BROKER else CELERY_VISIBILITY_TIMEOUT
)
EVALSITE_JOB_STALE_SECONDS = env.integer(
    "EVALSITE_JOB_STALE_SECONDS",
    max(2 * 3600, _LONGEST_SILENCE + CELERY_TASK_TIME_LIMIT),
    minimum=1,
)
if EVALSITE_JOB_STALE_SECONDS <= _LONGEST_SILENCE:
    raise ImproperlyConfigured(
        f"EVALSITE_JOB_STALE_SECONDS ({EVALSITE_JOB_STALE_SECONDS} s) must exceed "
        f"CELERY_TASK_TIME_LIMIT{'' if CELERY_EMBEDDED_BROKER else ' + CELERY_VISIBILITY_TIMEOUT'} "
        f"({_LONGEST_SILENCE} s): a job whose task may still be running is not dead."
    )
# A running judgment import moves its record this often (a heartbeat, on PostgreSQL); one whose
# heartbeat is four beats old (a minute by default) is taken for dead by the next look at it.
EVALSITE_JOB_HEARTBEAT_SECONDS = env.integer("EVALSITE_JOB_HEARTBEAT_SECONDS", 15, minimum=1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "filters": {"expected_answers": {"()": "evalsite.logfilters.ExpectedAnswers"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    # 409 and 410 answers (stale submits, closed campaigns, ...) are ordinary, not warnings.
    "loggers": {"django.request": {"filters": ["expected_answers"]}},
    "root": {
        "handlers": ["console"],
        "level": env.choice(
            "LOG_LEVEL", ("debug", "info", "warning", "error", "critical"), "info"
        ).upper(),
    },
}
