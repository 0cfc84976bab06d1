"""Small typed readers for environment variables.

Every setting of EvalSite comes from the environment through these helpers. A value that cannot be
read raises ``ImproperlyConfigured`` naming the variable, so a typo never silently becomes a default
(``os.environ.get("DEBUG", True)`` treats the string "False" as true; these do not).
"""

from __future__ import annotations

import os
import secrets
import zoneinfo
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class Env:
    """A view of the environment (``os.environ`` by default) with typed getters."""

    values: Mapping[str, str]

    @classmethod
    def from_os(cls) -> Env:
        return cls(os.environ)

    def is_set(self, name: str) -> bool:
        return self.values.get(name, "").strip() != ""

    def string(self, name: str, default: str = "") -> str:
        value = self.values.get(name)
        return default if value is None or value.strip() == "" else value.strip()

    def required_string(self, name: str, why: str) -> str:
        value = self.string(name)
        if not value:
            raise ImproperlyConfigured(f"{name} must be set {why}.")
        return value

    def boolean(self, name: str, default: bool) -> bool:
        raw = self.values.get(name)
        if raw is None:
            return default
        value = raw.strip().lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False if value else default
        raise ImproperlyConfigured(
            f"{name} must be a boolean (one of 1/0, true/false, yes/no, on/off), got {raw!r}."
        )

    def integer(self, name: str, default: int, *, minimum: int | None = None) -> int:
        raw = self.values.get(name)
        if raw is None or raw.strip() == "":
            return default
        try:
            value = int(raw.strip().replace("_", ""))
        except ValueError:
            raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}.") from None
        if minimum is not None and value < minimum:
            raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}.")
        return value

    def string_list(self, name: str, default: list[str] | None = None) -> list[str]:
        raw = self.values.get(name)
        if raw is None or raw.strip() == "":
            return list(default or [])
        return [part.strip() for part in raw.split(",") if part.strip()]

    def choice(self, name: str, choices: tuple[str, ...], default: str) -> str:
        value = self.string(name, default).lower()
        if value not in choices:
            raise ImproperlyConfigured(
                f"{name} must be one of {', '.join(choices)}, got {self.values.get(name)!r}."
            )
        return value

    def time_zone(self, name: str, default: str) -> str:
        """An IANA time-zone name (``Europe/Berlin``, ``UTC``)."""
        value = self.string(name, default)
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ImproperlyConfigured(
                f"{name} must be an IANA time-zone name such as UTC or Europe/Berlin, "
                f"got {value!r}."
            ) from None
        return value

    def url(self, name: str, default: str, *, schemes: tuple[str, ...]) -> str:
        """A URL whose scheme is one of ``schemes`` (e.g. ``redis://host:6379/0``)."""
        value = self.string(name, default)
        scheme = urlsplit(value).scheme.lower() if "://" in value else ""
        if scheme not in schemes:
            wanted = ", ".join(f"{s}://" for s in schemes)
            raise ImproperlyConfigured(f"{name} must start with {wanted}; got {value!r}.")
        return value

    def database(self, name: str, default_sqlite_path: Path) -> dict[str, Any]:
        """Django ``DATABASES['default']`` from a URL (``postgres://user:pw@host:port/db`` or
        ``sqlite:////abs/path``); SQLite at ``default_sqlite_path`` when unset."""
        raw = self.string(name)
        if not raw:
            return {"ENGINE": "django.db.backends.sqlite3", "NAME": str(default_sqlite_path)}
        return parse_database_url(raw, variable=name)


def prepare_threshold(value: Any, *, variable: str) -> int | None:
    """psycopg's ``prepare_threshold`` from ``?prepare_threshold=`` in a database URL: a whole
    number of runs before a hot-path statement is prepared, or ``off`` (never prepare, as a
    transaction-pooling PgBouncer needs)."""
    if value is None or isinstance(value, int):
        return value
    text = str(value).strip().lower()
    if text in {"off", "none", "no", "false"}:
        return None
    try:
        number = int(text)
    except ValueError:
        number = -1
    if number < 0:
        raise ImproperlyConfigured(
            f"{variable}: prepare_threshold must be a whole number or off, got {value!r}."
        )
    return number


def parse_database_url(url: str, *, variable: str) -> dict[str, Any]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "sqlite":
        # sqlite:///relative.db or sqlite:////absolute/path.db
        path = unquote(parts.path[1:] if parts.path.startswith("/") else parts.path)
        if not path:
            raise ImproperlyConfigured(f"{variable}: a sqlite URL needs a file path, got {url!r}.")
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": path}
    if scheme in {"postgres", "postgresql", "pgsql"}:
        name = unquote(parts.path.lstrip("/"))
        if not name:
            raise ImproperlyConfigured(f"{variable}: a PostgreSQL URL needs a database name.")
        try:
            port = parts.port
        except ValueError:
            raise ImproperlyConfigured(
                f"{variable}: the port in {url!r} is not a number."
            ) from None
        options = dict(parse_qsl(parts.query))
        try:
            conn_max_age = int(options.pop("conn_max_age", "0"))
        except ValueError:
            raise ImproperlyConfigured(
                f"{variable}: conn_max_age must be a whole number of seconds."
            ) from None
        config: dict[str, Any] = {
            "ENGINE": "evalsite.db.postgresql",
            "NAME": name,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(port or ""),
            "CONN_MAX_AGE": conn_max_age,
        }
        if options:
            config["OPTIONS"] = options
        return config
    raise ImproperlyConfigured(
        f"{variable} must start with postgres:// or sqlite://, got {scheme or 'no scheme'!r}."
    )


# Keys that have been published and so sign nothing: the placeholder .env.example once shipped
# and the throwaway of an image build. Any key of Django's startproject is refused by its prefix.
PUBLISHED_SECRET_KEYS = frozenset({"change-me-to-a-long-random-string", "build-only"})
MIN_SECRET_KEY_LENGTH = 50  # Django's own deployment check asks for at least 50 characters


def production_secret_key(value: str, *, variable: str = "SECRET_KEY") -> str:
    """``value`` if it can serve as the production secret key; otherwise ``ImproperlyConfigured``
    saying how to make one. Whoever knows the key can forge sessions and invite links."""
    how = 'generate one with: python3 -c "import secrets; print(secrets.token_urlsafe(50))"'
    if value in PUBLISHED_SECRET_KEYS or value.startswith("django-insecure-"):
        raise ImproperlyConfigured(f"{variable} is a published placeholder; {how}")
    if len(value) < MIN_SECRET_KEY_LENGTH:
        raise ImproperlyConfigured(
            f"{variable} must be at least {MIN_SECRET_KEY_LENGTH} characters long "
            f"(got {len(value)}); {how}"
        )
    return value


def local_secret_key(path: Path) -> str:
    """The development secret key: generated once into ``path`` (git-ignored), then reused."""
    if path.exists():
        key = path.read_text(encoding="utf-8").strip()
        if key:
            return key
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    path.write_text(key + "\n", encoding="utf-8")
    path.chmod(0o600)
    return key
