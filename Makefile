# The README's two commands are `make run` and `make test`; .ci/run calls `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install run test ingest serve lint bench browser

$(BIN)/errkb: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $@

install: $(BIN)/errkb

run: install
	$(BIN)/errkb ingest
	$(BIN)/errkb serve

ingest: install
	$(BIN)/errkb ingest

serve: install
	$(BIN)/errkb serve

browser:
	@# Debian's chromium for the Playwright tests (never a downloaded browser); a fresh machine
	@# has no apt lists yet, so update them first.
	@command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null)

test: install browser
	$(BIN)/pytest -q

lint: install
	$(BIN)/ruff check errkb ingest service tests bench
	$(BIN)/mypy errkb ingest service

bench: install
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/match.py
