"""No secret in the repository, and production refuses a key that is not one.

The scan reads every file git would commit (tracked, and untracked files that are not ignored; the
tree itself when this is not a git checkout) and looks for private keys, Django secret keys,
credentials of well-known services, and passwords or URL credentials other than the few listed
below with the reason each is harmless.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from evalsite.env import production_secret_key
from tests.support.processes import settings_in_subprocess

ROOT = Path(__file__).resolve().parents[2]
NOT_OURS = {".git", ".venv", "var", "test-output", "node_modules", "__pycache__", "staticfiles"}

# Literal values allowed where the scan looks for secrets, and why each is not one.
ALLOWED_PASSWORDS = {
    "evalsite-demo",  # the demo accounts' password, printed by load_demo and in the README
    "correct-horse-battery-staple",  # tests/factories.py: users of the test database
}
ALLOWED_URL_CREDENTIALS = {
    "evalsite:evalsite",  # compose's PostgreSQL, reachable only inside compose (checked below)
    "user:password",  # placeholders in documentation
    "user:pw",
    "me:s%40cret",  # tests/evalsite/test_settings_env.py: a URL parsed, never connected to
}
# Test-only key material: prefixes of keys the tests build for processes they start.
ALLOWED_SECRET_KEY_LITERALS = {"k", "outage-", "faults-only-"}
# A password spelled as a placeholder in documentation: PASSWORD, <password>.
PLACEHOLDER = re.compile(r"[A-Z_]+|<[^>]+>")

CHECKS = {
    "private key": re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"),
    "Django startproject key": re.compile(r"django-insecure-[^\s\"']{10,}"),
    "AWS access key": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,})"),
    "Slack token": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    "Stripe key": re.compile(r"\b[rs]k_live_[0-9A-Za-z]{16,}"),
    "DRF token": re.compile(r"Token [0-9a-f]{40}\b"),
}
# A quoted value anywhere; an unquoted one (KEY=value) outside Python, where it is a name.
SECRET_KEY_QUOTED = re.compile(r"""SECRET_KEY["']?\]?\s*[:=]\s*["']([^"'\n]*)["']""")
SECRET_KEY_BARE = re.compile(r"""SECRET_KEY\s*[:=]\s*([^\s"'$]\S*)""")
# Passwords long enough to be real ones (tests post "wrong" or "x" to login forms).
PASSWORD_LITERAL = re.compile(
    r"""(?i)\b\w*(?:password|passwd|pwd)\w*["']?\s*[:=]\s*["']([^"'\n]{8,})["']"""
)
URL_CREDENTIALS = re.compile(r"://([^/\s:@\"'`]+:[^/\s@\"'`]+)@")


def repository_files() -> list[Path]:
    """The files git would commit; without git, the tree minus what is never committed."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        found = []
        for folder, dirs, files in os.walk(ROOT):
            dirs[:] = [d for d in dirs if d not in NOT_OURS and not d.endswith(".egg-info")]
            found += [Path(folder) / name for name in files]
        return found
    return [ROOT / name for name in listed.split("\0") if name and (ROOT / name).is_file()]


def text_of(path: Path) -> str | None:
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None  # binary (compiled translations, images)
    return data.decode("utf-8", errors="replace")


def findings_in(relative: str, text: str) -> list[str]:
    """Suspicious lines of a file (``relative``: its path, whose suffix says whether it is
    Python)."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"{relative}:{number}"
        found += [f"{where}: {what}" for what, regex in CHECKS.items() if regex.search(line)]
        values = [m.group(1) for m in SECRET_KEY_QUOTED.finditer(line)]
        if not relative.endswith(".py"):
            values += [m.group(1) for m in SECRET_KEY_BARE.finditer(line)]
        for value in values:
            # Empty, or expanded by the shell ("$(python -c ...)") when used.
            if value and not value.startswith("$") and value not in ALLOWED_SECRET_KEY_LITERALS:
                found.append(f"{where}: SECRET_KEY literal {value[:12]!r}…")
        for match in PASSWORD_LITERAL.finditer(line):
            if match.group(1) not in ALLOWED_PASSWORDS:
                found.append(f"{where}: password literal {match.group(1)[:4]!r}…")
        for match in URL_CREDENTIALS.finditer(line):
            password = match.group(1).split(":", 1)[1]
            if match.group(1) not in ALLOWED_URL_CREDENTIALS and not PLACEHOLDER.fullmatch(
                password
            ):
                found.append(f"{where}: credentials in a URL")
    return found


def test_the_repository_holds_no_secret() -> None:
    files = repository_files()
    assert len(files) > 100  # the whole project was listed, not an empty tree
    findings = []
    for path in files:
        text = text_of(path)
        if text is not None:
            findings += findings_in(str(path.relative_to(ROOT)), text)
    assert not findings, "\n".join(findings)


def test_no_environment_file_is_committed() -> None:
    names = {path.name for path in repository_files()}
    assert ".env.example" in names
    assert not {name for name in names if name == ".env" or name.startswith(".env.")} - {
        ".env.example"
    }


def test_the_scan_finds_what_it_looks_for() -> None:
    """Each check against a line it must catch (written here in pieces, so that this file does
    not hold one)."""
    dashes = "-" * 5
    key = secrets.token_urlsafe(50)
    planted = [
        ("id_rsa", f"{dashes}BEGIN RSA PRIVATE KEY{dashes}"),
        ("id_ed25519", f"{dashes}BEGIN OPENSSH PRIVATE KEY{dashes}"),
        ("settings.py", "SECRET" + "_KEY = 'django-insecure-abc'"),
        ("settings.py", "SECRET" + f"_KEY = {key!r}"),
        ("settings.py", "os.environ['SECRET" + f"_KEY'] = {key!r}"),
        (".env", "SECRET" + f"_KEY={key}"),
        ("notes.md", "key: django-" + f"insecure-{key}"),
        ("ci.yml", "AKIA" + "ABCDEFGHIJKLMNOP"),
        ("ci.yml", "token: gh" + "p_" + "a" * 36),
        ("db.py", "db_pass" + "word = " + repr("hunter22")),
        (".env", "DATABASE_URL=postgres://admin:" + "s3cr3t@db.example/x"),
        (".env", "CELERY_BROKER_URL=redis://default:" + "Passw0rd@redis/0"),
    ]
    for name, line in planted:
        assert findings_in(name, line), line
    allowed = [
        (".env.example", "SECRET_KEY="),
        ("settings.py", 'SECRET_KEY = production_secret_key(env.string("SECRET_KEY"))'),
        ("settings.py", '"SECRET_KEY": SECRET,'),
        (
            "Dockerfile",
            "SECRET_KEY=\"$(python -c 'import secrets; print(secrets.token_urlsafe(50))')\"",
        ),
        ("demo.py", 'DEMO_PASSWORD = "evalsite-demo"'),
        ("deployment.md", "DATABASE_URL=postgres://evalsite:PASSWORD@db.internal:5432/evalsite"),
        ("test_login.py", '{"username": "limited", "password": "wrong"}'),
    ]
    for name, line in allowed:
        assert not findings_in(name, line), line


def test_composes_database_password_stays_inside_compose() -> None:
    """The compose file's PostgreSQL password is public; the database publishes no port."""
    from tests.conftest import compose_file

    assert "ports" not in compose_file()["services"]["postgres"]


# --------------------------------------------------------------------------------------------
# Production refuses a secret key that is not secret


@pytest.mark.parametrize(
    "key",
    [
        "change-me-to-a-long-random-string",  # the placeholder .env.example once shipped
        "build-only",  # the image build's old throwaway
        "django-insecure-" + "x" * 50,  # a startproject key
        secrets.token_urlsafe(20),  # random, but short
    ],
    # one id for the random key, so that every test process collects the same tests
    ids=["placeholder", "build-only", "startproject", "random-but-short"],
)
def test_production_refuses_a_published_or_short_secret_key(key: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY") as raised:
        production_secret_key(key)
    assert "secrets.token_urlsafe(50)" in str(raised.value)  # it says how to make one


def env_example_value(name: str) -> str:
    for line in (ROOT / ".env.example").read_text().splitlines():
        if line.startswith(f"{name}="):
            return line.split("=", 1)[1]
    raise AssertionError(f".env.example does not list {name}")


def test_production_settings_do_not_start_with_the_key_of_env_example(tmp_path: Path) -> None:
    base = {"EVALSITE_ENV": "production", "ALLOWED_HOSTS": "x", "EVALSITE_VAR_DIR": str(tmp_path)}
    refused = settings_in_subprocess(
        {**base, "SECRET_KEY": env_example_value("SECRET_KEY")}, "print('started')"
    )
    assert refused.returncode != 0
    assert "SECRET_KEY" in refused.stderr
    assert "started" not in refused.stdout
    started = settings_in_subprocess(
        {**base, "SECRET_KEY": secrets.token_urlsafe(50)}, "print('started')"
    )
    assert started.returncode == 0, started.stderr
    assert started.stdout.strip() == "started"
