# Two commands for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test install gpu-checks clean sandbox-check system-deps

$(STAMP): pyproject.toml requirements-lock.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c requirements-lock.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# Grade the example class (examples/submitted) on a GPU when there is one, else on the simulator.
demo: $(STAMP)
	$(VENV)/bin/autograder batch examples/submitted --db demo-out/results.sqlite --device auto

# Three workers on two cores: the gradings wait on their child processes part of the time (a
# class-sized suite ran 7:54 with -n 3 against 9:04 with -n 2 on a 2-core machine, 2026-11-25).
# The package's bytecode is written first (an editable install has none, and a machine with
# PYTHONDONTWRITEBYTECODE set never writes it), so the suite's ~500 grading children, each a fresh
# interpreter, do not compile the grader's modules again; pytest keeps its rewritten test modules.
test: $(STAMP) system-deps
	$(PY) -m compileall -q autograder
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -n 3 --durations=15

# How grading children run here: under bubblewrap (the optional system package `bubblewrap`,
# used when it is installed and works; nothing here needs root) or as plain child processes.
sandbox-check: $(STAMP)
	$(PY) -m autograder.sandbox

# System packages the tests use: bubblewrap (the sandbox real classes use) and Chromium (the HTML
# report's browser test). Installed with apt-get where we are root and they are missing (CI);
# elsewhere the tests that need them say what to install.
SYSTEM_PACKAGES := bubblewrap chromium
system-deps:
	@missing=""; command -v bwrap >/dev/null || missing="$$missing bubblewrap"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing$$missing (apt-get)"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null 2>&1; DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null; }; \
	elif [ -n "$$missing" ]; then echo "note: not installed:$$missing (apt-get install$$missing)"; fi

clean:
	rm -rf $(VENV) demo-out course
