# chatgate — two commands set everything up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
CONFIG ?= gateway.yaml
STAMP  := $(VENV)/.installed

.PHONY: run test lint typecheck unit bench clean venv screenshots fuzz soak constraints docs

$(STAMP): pyproject.toml deploy/constraints.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c deploy/constraints.txt -e '.[dev]'
	@touch $(STAMP)

# deploy/constraints.txt: the exact runtime dependency versions the image and `make venv` install,
# resolved afresh from pyproject.toml's ranges in a throwaway venv.
constraints:
	rm -rf .venv-constraints && $(PYTHON) -m venv .venv-constraints
	.venv-constraints/bin/python -m pip install --quiet .
	( echo "# Runtime dependency pins (make constraints regenerates; pip install -c deploy/constraints.txt)"; \
	  .venv-constraints/bin/python -m pip freeze --exclude-editable | grep -iv '^chatgate[= @]' ) > deploy/constraints.txt
	rm -rf .venv-constraints

venv: $(STAMP)

run: $(STAMP)
	@$(BIN)/python -m compileall -q chatgate >/dev/null
	$(BIN)/chatgate run --config $(CONFIG)

lint: $(STAMP)
	$(BIN)/ruff check chatgate tests bench
	$(BIN)/ruff format --check chatgate tests bench
	$(BIN)/mypy

# The manual (docs/, mkdocs.yml) as a site in build/site; a warning (broken link or anchor) fails it.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

typecheck: $(STAMP)
	$(BIN)/mypy

test: $(STAMP) lint docs
	$(BIN)/pytest -q -n 2 --dist loadfile

# ≥ 100,000 fuzz inputs in ≤ 15 minutes on one core (counts per target: --hypothesis-show-statistics)
FUZZ_CONFIG   ?= 68000
FUZZ_WEBHOOK  ?= 20000
FUZZ_TELEGRAM ?= 12000
# every HTTP surface over raw sockets (API, web chat, Telegram webhook, Slack, webhooks, framing)
FUZZ_SURFACE  ?= 1500
fuzz: $(STAMP)
	CHATGATE_FUZZ_EXAMPLES_CONFIG=$(FUZZ_CONFIG) CHATGATE_FUZZ_EXAMPLES_WEBHOOK=$(FUZZ_WEBHOOK) \
	CHATGATE_FUZZ_EXAMPLES_TELEGRAM=$(FUZZ_TELEGRAM) \
	CHATGATE_FUZZ_EXAMPLES_API=$(FUZZ_SURFACE) CHATGATE_FUZZ_EXAMPLES_WEBCHAT=$(FUZZ_SURFACE) \
	CHATGATE_FUZZ_EXAMPLES_TELEGRAM_WEBHOOK=$(FUZZ_SURFACE) CHATGATE_FUZZ_EXAMPLES_SLACK=$(FUZZ_SURFACE) \
	CHATGATE_FUZZ_EXAMPLES_WEBHOOK_RAW=$(FUZZ_SURFACE) CHATGATE_FUZZ_EXAMPLES_FRAMING=$(FUZZ_SURFACE) \
	$(BIN)/pytest -q -p no:randomly -p no:logging --timeout 900 tests/fuzz --hypothesis-show-statistics

bench: $(STAMP)
	@$(BIN)/python -m compileall -q chatgate >/dev/null
	$(BIN)/python -m bench

# The long kill -9 loop under load (SOAK_KILLS, default 30; ≤ 15 minutes); prints the figures
SOAK_KILLS ?= 30
soak: $(STAMP)
	timeout 900 $(BIN)/python -m tests.reliability.soak $(SOAK_KILLS)
	timeout 600 $(BIN)/pytest -q -n 0 -p no:randomly tests/redis/soak_replica_stalls.py

# docs/webchat.png and docs/dashboard.png: the real daemon, fakes and Debian's chromium
screenshots: $(STAMP)
	$(BIN)/python -m tests.browser.screenshots docs

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
