"""Settings come from the environment through typed helpers that name a bad variable."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from evalsite.env import Env, parse_database_url
from tests.support.processes import settings_in_subprocess

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("getter", "name", "value"),
    [
        (lambda e: e.boolean("DEBUG", True), "DEBUG", "maybe"),
        (lambda e: e.integer("EVALSITE_UPLOAD_MAX_BYTES", 1), "EVALSITE_UPLOAD_MAX_BYTES", "5MB"),
        (
            lambda e: e.integer("EVALSITE_UPLOAD_MAX_BYTES", 1, minimum=1),
            "EVALSITE_UPLOAD_MAX_BYTES",
            "0",
        ),
        (
            lambda e: e.choice("EVALSITE_ENV", ("development", "production"), "development"),
            "EVALSITE_ENV",
            "prod",
        ),
        (lambda e: e.database("DATABASE_URL", Path("x")), "DATABASE_URL", "mysql://u@h/db"),
        (
            lambda e: e.database("DATABASE_URL", Path("x")),
            "DATABASE_URL",
            "postgres://h:notaport/db",
        ),
        (lambda e: e.database("DATABASE_URL", Path("x")), "DATABASE_URL", "postgres://host/"),
        (
            lambda e: e.database("DATABASE_URL", Path("x")),
            "DATABASE_URL",
            "postgres://h/db?conn_max_age=ten",
        ),
        (lambda e: e.time_zone("TIME_ZONE", "UTC"), "TIME_ZONE", "Mars/Base"),
        (lambda e: e.time_zone("TIME_ZONE", "UTC"), "TIME_ZONE", "../etc/passwd"),
        (
            lambda e: e.url("CELERY_BROKER_URL", "x://", schemes=("redis", "filesystem")),
            "CELERY_BROKER_URL",
            "localhost:6379",
        ),
        (
            lambda e: e.url("CELERY_BROKER_URL", "x://", schemes=("redis", "filesystem")),
            "CELERY_BROKER_URL",
            "amqp://guest@localhost//",
        ),
        (
            lambda e: e.choice("LOG_LEVEL", ("debug", "info", "warning", "error"), "info"),
            "LOG_LEVEL",
            "verbose",
        ),
    ],
)
def test_a_bad_value_raises_naming_the_variable(getter, name: str, value: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ImproperlyConfigured, match=name):
        getter(Env({name: value}))


def test_the_string_false_is_false_and_unset_is_the_default() -> None:
    assert Env({"DEBUG": "False"}).boolean("DEBUG", True) is False
    assert Env({"DEBUG": "yes"}).boolean("DEBUG", False) is True
    assert Env({}).boolean("DEBUG", True) is True


def test_database_urls_are_parsed() -> None:
    pg = parse_database_url("postgres://me:s%40cret@db.example:6543/evals", variable="X")
    assert pg["ENGINE"] == "evalsite.db.postgresql"
    assert (pg["USER"], pg["PASSWORD"], pg["HOST"], pg["PORT"], pg["NAME"]) == (
        "me",
        "s@cret",
        "db.example",
        "6543",
        "evals",
    )
    assert parse_database_url("sqlite:////tmp/x.db", variable="X")["NAME"] == "/tmp/x.db"


def test_with_nothing_set_it_is_the_embedded_default(tmp_path: Path) -> None:
    result = settings_in_subprocess(
        {"EVALSITE_VAR_DIR": str(tmp_path)},
        "print(s.DATABASES['default']['ENGINE'], s.DEBUG, s.CELERY_BROKER_URL, s.SECRET_KEY)",
    )
    assert result.returncode == 0, result.stderr
    engine, debug, broker, key = result.stdout.split()
    assert engine == "django.db.backends.sqlite3"
    assert debug == "True"
    assert broker == "filesystem://localhost/"
    # The secret key was generated once into an ignored local file and is reused.
    assert (tmp_path / "secret_key").read_text().strip() == key
    again = settings_in_subprocess({"EVALSITE_VAR_DIR": str(tmp_path)}, "print(s.SECRET_KEY)")
    assert again.stdout.strip() == key


def test_the_embedded_broker_connects_without_a_warning(tmp_path: Path) -> None:
    # A file-system URL without a host made kombu warn "No hostname was supplied" on every
    # connection: in `make run`'s output and at each analysis request.
    code = (
        "import logging; logging.basicConfig(level=logging.WARNING)\n"
        "from kombu import Connection\n"
        "first = Connection(s.CELERY_BROKER_URL, transport_options="
        "s.CELERY_BROKER_TRANSPORT_OPTIONS)\n"
        "with first.clone() as c:\n"  # Celery's pools clone the app's connection
        "    c.SimpleQueue('probe').put({'x': 1}); print(c.SimpleQueue('probe').get().payload)"
    )
    result = settings_in_subprocess({"EVALSITE_VAR_DIR": str(tmp_path)}, code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "{'x': 1}"
    assert "WARNING" not in result.stderr, result.stderr


def test_database_and_broker_urls_switch_to_postgres_and_redis(tmp_path: Path) -> None:
    result = settings_in_subprocess(
        {
            "EVALSITE_VAR_DIR": str(tmp_path),
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/test",
            "CELERY_BROKER_URL": "redis://127.0.0.1:6379/3",
        },
        "print(s.DATABASES['default']['ENGINE'], s.CELERY_BROKER_URL, s.CELERY_RESULT_BACKEND)",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "evalsite.db.postgresql",
        "redis://127.0.0.1:6379/3",
        "redis://127.0.0.1:6379/3",
    ]


@pytest.mark.parametrize("missing", ["SECRET_KEY", "ALLOWED_HOSTS"])
def test_production_requires_secret_key_and_allowed_hosts(tmp_path: Path, missing: str) -> None:
    env = {
        "EVALSITE_VAR_DIR": str(tmp_path),
        "EVALSITE_ENV": "production",
        "SECRET_KEY": "k" * 50,
        "ALLOWED_HOSTS": "evalsite.example.org",
    }
    del env[missing]
    result = settings_in_subprocess(env, "")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert missing in result.stderr


def test_production_turns_debug_off(tmp_path: Path) -> None:
    result = settings_in_subprocess(
        {
            "EVALSITE_VAR_DIR": str(tmp_path),
            "EVALSITE_ENV": "production",
            "SECRET_KEY": "k" * 50,
            "ALLOWED_HOSTS": "evalsite.example.org",
        },
        "print(s.DEBUG, s.ALLOWED_HOSTS)",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False ['evalsite.example.org']"
    assert not (tmp_path / "secret_key").exists()


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("DEBUG", "sometimes", "DEBUG must be a boolean"),
        ("LOG_LEVEL", "verbose", "LOG_LEVEL must be one of"),
        ("TIME_ZONE", "Mars/Base", "TIME_ZONE must be an IANA time-zone name"),
        ("CELERY_BROKER_URL", "localhost:6379", "CELERY_BROKER_URL must start with redis://"),
        ("DATABASE_URL", "postgres://h/db?conn_max_age=ten", "DATABASE_URL: conn_max_age"),
    ],
)
def test_a_bad_variable_stops_the_settings_with_its_name(
    tmp_path: Path, name: str, value: str, message: str
) -> None:
    result = settings_in_subprocess({"EVALSITE_VAR_DIR": str(tmp_path), name: value}, "")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert message in result.stderr


def test_good_time_zone_log_level_and_conn_max_age_are_taken(tmp_path: Path) -> None:
    result = settings_in_subprocess(
        {
            "EVALSITE_VAR_DIR": str(tmp_path),
            "TIME_ZONE": "Europe/Berlin",
            "LOG_LEVEL": "warning",
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/test?conn_max_age=60",
        },
        "print(s.TIME_ZONE, s.LOGGING['root']['level'], s.DATABASES['default']['CONN_MAX_AGE'])",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["Europe/Berlin", "WARNING", "60"]


def test_by_default_redis_redelivers_only_after_the_hard_time_limit(tmp_path: Path) -> None:
    result = settings_in_subprocess(
        {"EVALSITE_VAR_DIR": str(tmp_path), "CELERY_BROKER_URL": "redis://127.0.0.1:6379/3"},
        "print(s.CELERY_TASK_SOFT_TIME_LIMIT, s.CELERY_TASK_TIME_LIMIT,"
        " s.CELERY_BROKER_TRANSPORT_OPTIONS['visibility_timeout'], s.EVALSITE_JOB_STALE_SECONDS)",
    )
    assert result.returncode == 0, result.stderr
    soft, hard, visibility, stale = map(int, result.stdout.split())
    assert soft < hard < visibility
    # A job is taken for dead only after a redelivered task could have ended.
    assert stale > visibility + hard


@pytest.mark.parametrize(
    ("env", "names"),
    [
        (
            {"CELERY_VISIBILITY_TIMEOUT": "600"},
            ["CELERY_VISIBILITY_TIMEOUT", "CELERY_TASK_TIME_LIMIT"],
        ),
        (
            {"CELERY_TASK_TIME_LIMIT": "4000", "CELERY_VISIBILITY_TIMEOUT": "3600"},
            ["CELERY_VISIBILITY_TIMEOUT", "CELERY_TASK_TIME_LIMIT"],
        ),
        (
            {"CELERY_TASK_SOFT_TIME_LIMIT": "60", "CELERY_TASK_TIME_LIMIT": "60"},
            ["CELERY_TASK_TIME_LIMIT", "CELERY_TASK_SOFT_TIME_LIMIT"],
        ),
        (
            {"EVALSITE_JOB_STALE_SECONDS": "3000"},
            ["EVALSITE_JOB_STALE_SECONDS", "CELERY_TASK_TIME_LIMIT", "CELERY_VISIBILITY_TIMEOUT"],
        ),
    ],
)
def test_inconsistent_time_limits_stop_the_settings_naming_the_variables(
    tmp_path: Path, env: dict[str, str], names: list[str]
) -> None:
    result = settings_in_subprocess(
        {"EVALSITE_VAR_DIR": str(tmp_path), "CELERY_BROKER_URL": "redis://127.0.0.1:6379/3", **env},
        "",
    )
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    for name in names:
        assert name in result.stderr


def test_consistent_short_time_limits_are_taken(tmp_path: Path) -> None:
    result = settings_in_subprocess(
        {
            "EVALSITE_VAR_DIR": str(tmp_path),
            "CELERY_BROKER_URL": "redis://127.0.0.1:6379/3",
            "CELERY_TASK_SOFT_TIME_LIMIT": "25",
            "CELERY_TASK_TIME_LIMIT": "30",
            "CELERY_VISIBILITY_TIMEOUT": "35",
        },
        "print(s.CELERY_BROKER_TRANSPORT_OPTIONS['visibility_timeout'])",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "35"


def test_prepare_threshold_comes_from_the_database_url() -> None:
    from evalsite.env import prepare_threshold

    assert prepare_threshold(1, variable="X") == 1
    assert prepare_threshold("0", variable="X") == 0
    assert prepare_threshold("5", variable="X") == 5
    assert prepare_threshold("off", variable="X") is None
    assert prepare_threshold("None", variable="X") is None
    for bad in ("-1", "soon", "1.5"):
        with pytest.raises(ImproperlyConfigured, match="prepare_threshold must be"):
            prepare_threshold(bad, variable="X")
    options = parse_database_url("postgres://h/db?prepare_threshold=off", variable="X")["OPTIONS"]
    assert prepare_threshold(options["prepare_threshold"], variable="X") is None
