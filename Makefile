# chatgate — two commands set everything up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
CONFIG ?= gateway.yaml
STAMP  := $(VENV)/.installed

.PHONY: run test lint typecheck unit bench clean venv screenshots fuzz soak constraints docs sbom

# Hash-locked: every distribution (dev tools and the build backend included) comes from
# deploy/constraints-dev.txt with its sha256; chatgate itself is built without isolation.
# uv (itself taken from the lock by pip, hash-checked) installs the rest: the same files and
# hashes as pip in a fifth of the time (measured: 39 s vs 226 s wall, 35 vs 82 CPU s, load 5),
# bytecode compiled in parallel. Where uv cannot install (no index it can reach), pip does.
UV_PIN := $(VENV)/uv-requirement.txt
$(STAMP): pyproject.toml deploy/constraints.txt deploy/constraints-dev.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@awk '/^uv==/ {p = 1; print; next} p && /^[^ ]/ {exit} p' deploy/constraints-dev.txt >$(UV_PIN)
	$(BIN)/python -m pip install --quiet --require-hashes --no-deps -r $(UV_PIN)
	$(BIN)/uv pip install --python $(BIN)/python --quiet --compile-bytecode \
	  --require-hashes --no-deps -r deploy/constraints-dev.txt \
	  || $(BIN)/python -m pip install --quiet --require-hashes --no-deps -r deploy/constraints-dev.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $(STAMP)

# deploy/constraints.txt (the image's runtime set) and deploy/constraints-dev.txt (plus the dev
# extras, the runtime versions kept): the whole resolved set, hash-locked, by uv from
# pyproject.toml's ranges for any platform on Python 3.11. Versions already locked are kept
# unless they no longer fit; `make constraints UPGRADE=--upgrade` takes the newest.
LOCK_FLAGS := --universal --python-version 3.11 --generate-hashes --quiet $(UPGRADE)
constraints:
	@test -x $(BIN)/uv || { echo "make venv first (uv comes with the dev extras)"; exit 1; }
	$(BIN)/uv pip compile pyproject.toml $(LOCK_FLAGS) -o deploy/constraints.txt
	$(BIN)/uv pip compile pyproject.toml --extra dev -c deploy/constraints.txt $(LOCK_FLAGS) \
	  -o deploy/constraints-dev.txt

# build/sbom.cdx.json: a CycloneDX SBOM of the image's environment (the runtime lock installed in
# a throwaway venv, as the Dockerfile does); the image carries it as
# /usr/share/doc/chatgate/sbom.cdx.json.
sbom: $(STAMP)
	rm -rf build/sbom-venv && $(PYTHON) -m venv build/sbom-venv
	build/sbom-venv/bin/python -m pip install --quiet --require-hashes --no-deps -r deploy/constraints.txt
	build/sbom-venv/bin/python -m pip install --quiet --no-deps .
	$(BIN)/cyclonedx-py environment --output-reproducible --of JSON -o build/sbom.cdx.json build/sbom-venv/bin/python
	rm -rf build/sbom-venv

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

# lint and docs (mypy from cold is ~45 CPU s) run beside pytest, which spends much of its time
# waiting on daemons and servers; their output follows the tests'. Bytecode is compiled once and
# written by every process (PYTHONDONTWRITEBYTECODE dropped): each daemon a test starts would
# otherwise compile chatgate from source, and pytest re-rewrite every test module per worker.
# `make test TESTS=tests/media` runs a part of the suite (with all the checks). Three xdist workers
# on two cores: the suite mostly waits on daemons and servers (measured on 2 cores, same commit:
# pytest 8:06 with 2 workers, 7:26 with 3, all green).
WORKERS ?= 3
test: $(STAMP)
	@mkdir -p build
	@$(BIN)/python -m compileall -q chatgate tests bench >/dev/null
	@$(MAKE) --no-print-directory lint docs >build/checks.log 2>&1 & checks=$$!; \
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q -n $(WORKERS) --dist loadfile $(TESTS); tests=$$?; \
	wait $$checks; lint=$$?; cat build/checks.log; \
	test $$tests -eq 0 -a $$lint -eq 0

# ≥ 100,000 fuzz inputs in ≤ 15 minutes on one core (counts per target: --hypothesis-show-statistics)
FUZZ_CONFIG   ?= 68000
FUZZ_WEBHOOK  ?= 20000
FUZZ_TELEGRAM ?= 12000
FUZZ_MAIL     ?= 3000
# every HTTP surface over raw sockets (API, web chat, Telegram webhook, Slack, WhatsApp, Teams,
# webhooks, framing)
FUZZ_SURFACE  ?= 1500
fuzz: $(STAMP)
	CHATGATE_FUZZ_EXAMPLES_CONFIG=$(FUZZ_CONFIG) CHATGATE_FUZZ_EXAMPLES_WEBHOOK=$(FUZZ_WEBHOOK) \
	CHATGATE_FUZZ_EXAMPLES_TELEGRAM=$(FUZZ_TELEGRAM) CHATGATE_FUZZ_EXAMPLES_MAIL=$(FUZZ_MAIL) \
	CHATGATE_FUZZ_EXAMPLES_API=$(FUZZ_SURFACE) CHATGATE_FUZZ_EXAMPLES_WEBCHAT=$(FUZZ_SURFACE) \
	CHATGATE_FUZZ_EXAMPLES_TELEGRAM_WEBHOOK=$(FUZZ_SURFACE) CHATGATE_FUZZ_EXAMPLES_SLACK=$(FUZZ_SURFACE) \
	CHATGATE_FUZZ_EXAMPLES_WEBHOOK_RAW=$(FUZZ_SURFACE) CHATGATE_FUZZ_EXAMPLES_FRAMING=$(FUZZ_SURFACE) \
	CHATGATE_FUZZ_EXAMPLES_WHATSAPP=$(FUZZ_SURFACE) CHATGATE_FUZZ_EXAMPLES_TEAMS=$(FUZZ_SURFACE) \
	$(BIN)/pytest -q -p no:randomly -p no:logging --timeout 900 tests/fuzz --hypothesis-show-statistics

bench: $(STAMP)
	@$(BIN)/python -m compileall -q chatgate >/dev/null
	$(BIN)/python -m bench

# The long kill -9 loop under load (SOAK_KILLS, default 30; ≤ 15 minutes); prints the figures
SOAK_KILLS ?= 30
soak: $(STAMP)
	timeout 900 $(BIN)/python -m tests.reliability.soak $(SOAK_KILLS)
	timeout 600 $(BIN)/pytest -q -n 0 -p no:randomly tests/redis/soak_replica_stalls.py
	timeout 1800 $(BIN)/pytest -q -n 0 -p no:randomly -s tests/redis/soak_replica_handoffs.py

# docs/webchat.png and docs/dashboard.png: the real daemon, fakes and Debian's chromium
screenshots: $(STAMP)
	$(BIN)/python -m tests.browser.screenshots docs

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
