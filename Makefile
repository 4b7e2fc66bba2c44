# Quick start: `make run` (install, then serve the app on 127.0.0.1) and `make test`.
# Every target creates or reuses .venv and is safe to run again.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501

.PHONY: run test test-fast test-long test-torch bench lint format clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Stamps make installs idempotent: pip runs again only when the dependency files change.
# pip compiles the installed modules one after another; compileall does it on every core (a
# fresh clone's install took 25 s instead of 32 on two cores). A third-party file that does not
# compile (javaobj ships one in Python 3.12 syntax; pip skips it too) and third-party warnings
# are not capeval's to report. The packages' own test folders (a third of their files, never
# imported by capeval) are left out: 9 s instead of 13 on two cores.
INSTALL := $(BIN)/pip install --quiet --no-compile
COMPILE := $(BIN)/python -W ignore -m compileall -q -j 0 -x '/tests?/' $(VENV)/lib >/dev/null || true

$(VENV)/.stamp-app: $(BIN)/python pyproject.toml requirements.txt
	$(INSTALL) -r requirements.txt -e .
	$(COMPILE)
	touch $@

# The test requirements include the app's: one pip run installs both.
$(VENV)/.stamp-test: $(BIN)/python pyproject.toml requirements.txt requirements-test.txt
	$(INSTALL) -r requirements-test.txt -e ".[test]"
	$(COMPILE)
	touch $(VENV)/.stamp-app $@

# .streamlit/config.toml holds the rest (127.0.0.1 only, upload cap, no usage statistics).
run: $(VENV)/.stamp-app
	$(BIN)/streamlit run app.py --server.port $(PORT)

# Three workers on CI's two cores: a browser test spends much of its time waiting for the app
# server and chromium, and the third worker fills those waits (measured: the suite 10% faster,
# 10 GB of memory at most). An idle worker takes tests from another's queue, so one long test
# does not hold back the tests queued behind it. Module fixtures (an app server, the oracle
# run) are built once per worker that needs them.
PYTEST_WORKERS ?= 3

# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE): the
# suite starts hundreds of Python processes (workers, app servers, scoring workers, CLI runs),
# and without it each one compiles capeval's modules, and pytest rewrites the test modules,
# again from source.
test: $(VENV)/.stamp-test
	$(BIN)/ruff check .
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist worksteal --durations=25 -m "not long"

# The long captions' SPICE checks (150 and 190-400 words, half a minute to minutes each) that
# `make test` leaves out.
test-long: $(VENV)/.stamp-test
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) -m long

# Everything but the slow oracle cross-checks and browser screenshots.
test-fast: $(VENV)/.stamp-test
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile -m "not slow and not browser"

# Opt-in: installs torch (the train extra) and runs the live numpy-vs-torch I2CE checks and the
# training smoke test. Not part of `make test`: without a local CPU wheel, pip pulls a multi-GB
# CUDA build of torch.
test-torch: $(VENV)/.stamp-test
	$(BIN)/pip install --quiet -e ".[train]"
	$(BIN)/python -m pytest -m torch tests/core/test_i2ce.py

bench: $(VENV)/.stamp-test
	$(BIN)/python -m bench

lint: $(VENV)/.stamp-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(VENV)/.stamp-test
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
