# aces-bench developer and user entry points. `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV ?= .venv
VENV_PY := $(VENV)/bin/python
# Scripts under tests/ run outside pytest import the shared helpers as `support.*` from tests/.
TEST_SCRIPT_ENV := PYTHONPATH=tests
STAMP := $(VENV)/.aces-installed
OUT ?= outputs/demo
# Calibration arms of `make demo` (study.controls): null and placebo beside the headline.
DEMO_CONTROLS ?= [null,placebo]
PYTEST_ARGS ?=
# `make test` runs the suite in TEST_WORKERS pytest-xdist processes (auto: one per core;
# 0: in-process, no xdist). --dist loadfile sends each test file whole to one worker, so a
# module-scoped study (the known-effect runs, the grading pipeline's) runs once. (Not
# loadgroup: pytest-xdist 3.8 marks groups through Item._nodeid, which pytest 9 no longer
# reads, so xdist_group marks are silently ignored and a shared study runs on both workers.)
TEST_WORKERS ?= auto

# First interpreter >= 3.12 found: $ACES_PYTHON, then PATH, then pyenv and common prefixes.
# (pyenv's python3.12 shim fails without PYENV_VERSION; the version probe skips it.)
define find_python
for c in "$$ACES_PYTHON" python3.13 python3.12 python3 \
         $$HOME/.pyenv/versions/3.1[2-9]*/bin/python /root/.pyenv/versions/3.1[2-9]*/bin/python \
         /usr/local/bin/python3.1[2-9] /usr/bin/python3.1[2-9]; do \
  [ -n "$$c" ] || continue; \
  if "$$c" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; then \
    command -v "$$c" 2>/dev/null || echo "$$c"; exit 0; fi; \
done; exit 1
endef

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@py="$$( $(find_python) )" || { \
	  echo "error: aces-bench needs Python >= 3.12 (Harbor requires it); none was found." >&2; \
	  echo "  install one, e.g. 'apt-get install python3.12-venv' or 'pyenv install 3.12', or set ACES_PYTHON=/path/to/python3.12" >&2; \
	  exit 1; }; \
	echo "using $$py ($$("$$py" --version))"; \
	[ -x "$(VENV_PY)" ] || "$$py" -m venv $(VENV); \
	$(VENV_PY) -m pip install -q --upgrade pip >/dev/null; \
	$(VENV_PY) -m pip install -q -e ".[test]"
	@touch $(STAMP)

.PHONY: install
install: $(STAMP) ## Create .venv (Python >= 3.12) and install aces-bench with test extras

.PHONY: sandbox
sandbox: ## Make sure bubblewrap (the local sandbox backend) is installed
	@if command -v bwrap >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing bubblewrap (apt-get)"; \
	  (apt-get install -y -qq bubblewrap >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get install -y -qq bubblewrap >/dev/null; }); \
	else \
	  echo "error: the local backend needs bubblewrap (bwrap). Install it: 'sudo apt-get install bubblewrap' (Debian/Ubuntu), 'sudo dnf install bubblewrap' (Fedora), or run with backend=docker." >&2; exit 1; \
	fi

# Debian packages the full test suite uses, each as "command=package[+package]": the
# sandbox, headless Chromium (report browser test), pdflatex with booktabs and siunitx
# (LaTeX tables: siunitx is in texlive-science), shellcheck (script lint), ripgrep
# (opencode's skill tool) and npm (agent CLIs). Only the packages of missing commands
# are installed: a machine whose Node.js comes from elsewhere (NodeSource's nodejs
# bundles npm and conflicts with Debian's npm) keeps it.
TEST_TOOLS := bwrap=bubblewrap chromium=chromium \
              pdflatex=texlive-latex-base+texlive-latex-recommended+texlive-science \
              shellcheck=shellcheck rg=ripgrep npm=nodejs+npm

.PHONY: test-deps
test-deps: sandbox ## Install the Debian packages the tests use (root + apt), or say what is missing
	@missing=""; pkgs=""; \
	for t in $(TEST_TOOLS); do b=$${t%%=*}; \
	  if command -v $$b >/dev/null 2>&1; then \
	    [ $$b != pdflatex ] && continue; [ "$$(kpsewhich booktabs.sty siunitx.sty 2>/dev/null | wc -l)" -eq 2 ] && continue; fi; \
	  missing="$$missing $$b"; pkgs="$$pkgs $$(echo $${t#*=} | tr + ' ')"; done; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing test packages for$$missing:$$pkgs (apt-get)"; \
	  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$pkgs >/dev/null; \
	else \
	  echo "note: missing$$missing; the tests that need them will skip. Install: apt-get install --no-install-recommends$$pkgs" >&2; \
	fi

.PHONY: agents
agents: install test-deps ## Install the npm agent CLIs (claude-code, codex, opencode; pinned) into .aces-cache/agents
	$(VENV)/bin/aces-bench agents install claude-code codex opencode

PODMAN_DEBS := podman runc debootstrap uidmap slirp4netns

.PHONY: podman
podman: install ## Set up backend=podman: podman + runc (apt), podman-compose (PyPI), the offline base image
	@missing=""; for b in podman runc debootstrap; do command -v $$b >/dev/null 2>&1 || missing="$$missing $$b"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing$$missing (apt-get)"; \
	    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(PODMAN_DEBS) >/dev/null; \
	  else echo "error: backend=podman needs$$missing: apt-get install $(PODMAN_DEBS)" >&2; exit 1; fi; \
	fi
	@[ -x $(VENV)/bin/podman-compose ] || $(VENV_PY) -m pip install -q "podman-compose>=1.1"
	$(VENV)/bin/aces-bench podman image

.PHONY: demo
demo: install sandbox ## Run the demo study offline (reference agent, local sandbox, heuristic judge), null and placebo arms beside the headline (DEMO_CONTROLS=[] for none)
	HARBOR_TELEMETRY=0 LITELLM_LOCAL_MODEL_COST_MAP=True $(VENV)/bin/aces-bench study=demo 'study.controls=$(DEMO_CONTROLS)'

.PHONY: sweep
sweep: install sandbox ## Example multirun: isolation vs group (paper decoys) with the reference agent
	HARBOR_TELEMETRY=0 LITELLM_LOCAL_MODEL_COST_MAP=True $(VENV)/bin/aces-bench -m study=demo workspace=isolation,group decoys=paper

.PHONY: test
test: install test-deps ## Run the test suite
	HARBOR_TELEMETRY=0 LITELLM_LOCAL_MODEL_COST_MAP=True $(VENV_PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

.PHONY: validate
validate: install sandbox ## Known-effect suite: helpful/useless/harmful/confusable skills, and gaming/crashing/over-triggering/all-win/one-case gate verdicts, on reference + terminus-2
	$(TEST_SCRIPT_ENV) HARBOR_TELEMETRY=0 LITELLM_LOCAL_MODEL_COST_MAP=True $(VENV_PY) tests/known_effect/validate.py --out outputs/known-effect

.PHONY: lint
lint: install ## Lint with ruff and check the import layers (import-linter; both configured in pyproject.toml)
	$(VENV_PY) -m ruff check .
	$(VENV_PY) tools/lint_layers.py

.PHONY: bench
bench: install sandbox ## Run every speed benchmark, then list every missed target (exit 1 if any)
	@log=$$(mktemp); missed=""; \
	for b in tests/bench/bench_*.py; do echo "== $$b"; \
	  $(TEST_SCRIPT_ENV) HARBOR_TELEMETRY=0 LITELLM_LOCAL_MODEL_COST_MAP=True $(VENV_PY) $$b 2>&1 | tee $$log; rc=$${PIPESTATUS[0]}; \
	  miss=$$(grep -E '\b(MISSED|OVER|SLOW)\b' $$log | sed "s|^|  $$b: |"); \
	  [ "$$rc" = 0 ] || miss="$$miss$${miss:+$$'\n'}  $$b: exited with status $$rc"; \
	  [ -z "$$miss" ] || missed="$$missed$${missed:+$$'\n'}$$miss"; done; rm -f $$log; \
	echo; if [ -n "$$missed" ]; then echo "missed targets (timings on a shared machine rise with load; compare CPU time):"; \
	  echo "$$missed"; exit 1; fi; echo "every benchmark met its targets"

.PHONY: bench-sequential
bench-sequential: install sandbox ## Sequential vs fixed gate: SkillsBench simulation (needs ../shared; with a skewed null and a 10-skill A/A family) and the known-effect suite live
	$(TEST_SCRIPT_ENV) HARBOR_TELEMETRY=0 LITELLM_LOCAL_MODEL_COST_MAP=True $(VENV_PY) tests/bench/bench_sequential.py

.PHONY: bench-gate
bench-gate: install ## The gate's power, family-wise error, skewed-null size and monotonicity, simulated (docs/gate.md)
	HARBOR_TELEMETRY=0 LITELLM_LOCAL_MODEL_COST_MAP=True $(VENV_PY) tests/bench/bench_gate.py

.PHONY: clean
clean: ## Remove outputs, caches and the virtualenv
	rm -rf $(VENV) outputs multirun .pytest_cache .aces-cache build *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
