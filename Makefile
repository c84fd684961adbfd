# The README's two commands are `make run` and `make test`; .ci/run calls `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install run test test-fast ingest serve lint bench bench-knowledge bench-fresh browser wheel-smoke

# The matcher's sources too: the install compiles them (setup.py), and a compiled module older
# than its source would be set aside for the slower source (service/match/matcher/compiled.py).
$(BIN)/errkb: pyproject.toml setup.py $(wildcard service/match/matcher/*.py)
	@echo "Installing errkb and its dependencies into $(VENV), compiling the matcher (about a minute)..."
	@# -qq: errors only. With -q, pip printed ~100 lines of warnings on these machines (index
	@# folders the machine's pip config names, setuptools' note on editable installs).
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -qq --upgrade pip
	$(BIN)/pip install -qq -e '.[test]'
	touch $@

install: $(BIN)/errkb

# The first run serves at once: the pins are ingested behind the running server, each release
# served as soon as it is stored, and the entry documents are built by the server, on each first
# request and in the background (see service/cli/serve_ingest.py and serve_docs.py).
run: install
	$(BIN)/errkb serve --ingest

ingest: install
	$(BIN)/errkb ingest

serve: install
	$(BIN)/errkb serve

browser:
	@# Debian's chromium for the Playwright tests (never a downloaded browser); a fresh machine
	@# has no apt lists yet, so update them first.
	@command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null)

# One test process per core (pytest-xdist), each test file kept in one process (its module
# fixtures, a served knowledge base or a browser, are set up once). The shared knowledge bases are
# built once per machine, each under a file lock of its own (tests/kbcache.py), and copied by each
# process. Files start longest first, as timed in the last run here (tests/file_order.py), not
# in xdist's order by their number of tests. The slowest ten tests are listed at the end.
# TEST_PROCESSES=0 runs in this one process.
TEST_PROCESSES ?= auto
test: install browser
	$(BIN)/pytest -q -n $(TEST_PROCESSES) --dist loadfile --no-loadscope-reorder --durations=10

# The inner loop: every test but the whole-release runs (tests/e2e and anything marked sglang
# or browser: no sglang download, no knowledge-base build, no browser) and the few marked slow
# (several real servers, a killed ingest, Schemathesis), which took 2/3 of the rest's time.
test-fast: install
	$(BIN)/pytest -q -p no:cacheprovider --ignore=tests/e2e -m "not sglang and not browser and not slow"

# mypy reads the one package `errkb` from a tree of links shaped like the installed wheel
# (ingest/, knowledge/, service/ and migrations/ are subpackages of errkb there).
TYPECHECK := .build/typecheck
lint: install
	$(BIN)/ruff check errkb ingest knowledge service tests bench setup.py
	$(BIN)/ruff format --check errkb ingest knowledge service tests bench setup.py
	rm -rf $(TYPECHECK) && mkdir -p $(TYPECHECK)/errkb
	for f in errkb/*; do ln -s "$(CURDIR)/$$f" $(TYPECHECK)/errkb/; done
	for d in ingest knowledge service migrations; do ln -s "$(CURDIR)/$$d" $(TYPECHECK)/errkb/$$d; done
	cd $(TYPECHECK) && $(CURDIR)/$(BIN)/mypy -p errkb

# The built wheel in a fresh venv, used from a folder outside the checkout: migrate, ingest one
# sglang release, serve, and read an entry back over HTTP.
wheel-smoke:
	.ci/wheel-smoke

bench: install
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/match.py
	$(BIN)/python bench/entry_size.py
	$(BIN)/python bench/db_size.py
	$(BIN)/python bench/knowledge.py

bench-knowledge: install
	$(BIN)/python bench/knowledge.py

# Incremental entry docs: the newest release added to a history of releases (see bench/fresh.py).
bench-fresh: install
	$(BIN)/python bench/fresh.py
