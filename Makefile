# EvalSite: one command per verb. `make run` and `make test` are the only set-up a fresh machine needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test

# Tests talk to real PostgreSQL and Redis (local defaults; .ci/run exports the same).
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
TEST_BROKER_URL ?= redis://127.0.0.1:6379/15

# Test processes (pytest-xdist): each has its own test database and Redis database.
TEST_WORKERS ?= 2
# Idle processes take tests queued for others: the slow ones (browsers, workers) come last.
# Closed ports: `make test-fast` must not reach a service, so a test that needs one fails there.
NO_DATABASE_URL := postgres://nobody@127.0.0.1:1/none
NO_BROKER_URL := redis://127.0.0.1:1/15

.PHONY: run test test-fast test-some lint format clean

# Create .venv, install, migrate, load the demo campaign, serve http://127.0.0.1:8000 with a worker.
run: $(RUN_STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo
	$(BIN)/python manage.py analyse --demo
	$(BIN)/python manage.py serve

# Create .venv with everything the tests need (Chromium too), start this machine's PostgreSQL and
# Redis if they are down, lint, type-check, run the whole suite in new test databases.
test: $(TEST_STAMP)
	scripts/ensure-chromium.sh
	scripts/ensure-services.sh "$${DATABASE_URL:-$(TEST_DATABASE_URL)}" \
	  "$${CELERY_BROKER_URL:-$(TEST_BROKER_URL)}"
	$(MAKE) lint
	DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" \
	CELERY_BROKER_URL="$${CELERY_BROKER_URL:-$(TEST_BROKER_URL)}" \
	$(BIN)/pytest -n $(TEST_WORKERS) --dist worksteal --create-db --durations=10 $(PYTEST_ARGS)

# The quick slice while you work: every test that needs no PostgreSQL, Redis or browser and is
# not slow (markers set in tests/conftest.py), with the services pointed at closed ports.
test-fast: $(TEST_STAMP)
	DATABASE_URL=$(NO_DATABASE_URL) CELERY_BROKER_URL=$(NO_BROKER_URL) \
	$(BIN)/pytest -n $(TEST_WORKERS) --dist worksteal -m "not services and not browser and not slow" $(PYTEST_ARGS)

# Chosen tests against the services, keeping the test databases between runs (add --create-db
# after a new migration): make test-some PYTEST_ARGS=tests/annotation/judging
test-some: $(TEST_STAMP)
	scripts/ensure-services.sh "$${DATABASE_URL:-$(TEST_DATABASE_URL)}" \
	  "$${CELERY_BROKER_URL:-$(TEST_BROKER_URL)}"
	DATABASE_URL="$${DATABASE_URL:-$(TEST_DATABASE_URL)}" \
	CELERY_BROKER_URL="$${CELERY_BROKER_URL:-$(TEST_BROKER_URL)}" \
	$(BIN)/pytest -n $(TEST_WORKERS) --dist worksteal --reuse-db $(PYTEST_ARGS)

# ruff (lint and format check) and mypy (the numerical core strictly, the apps with Django's stubs).
lint: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# Rewrite the code in ruff's format and apply its safe fixes.
format: $(TEST_STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The app alone (what `make run` needs), its compiled kernels cached once here.
$(RUN_STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet --disable-pip-version-check -e .
	$(BIN)/python -m evalcore.scoring.warm
	touch $@

# The app with the test tools and the neural extra (BERTR), so CI tests every metric; the
# kernels and BERTR's exported encoder are cached once here, not in whichever test comes first.
$(TEST_STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev,neural]'
	$(BIN)/python -m evalcore.scoring.warm
	touch $@ $(RUN_STAMP)

# Remove the virtualenv and the embedded default's local state (database, broker, secret key).
clean:
	rm -rf $(VENV) var test-output .pytest_cache .mypy_cache .ruff_cache
