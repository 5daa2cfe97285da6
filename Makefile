# Two commands for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test install gpu-checks clean sandbox-check

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# Grade the example class (examples/submitted) on a GPU when there is one, else on the simulator.
demo: $(STAMP)
	$(VENV)/bin/autograder batch examples/submitted --db demo-out/results.sqlite --device auto

test: $(STAMP)
	$(PY) -m pytest -q -n 2 --durations=15

# How grading children run here: under bubblewrap (the optional system package `bubblewrap`,
# used when it is installed and works; nothing here needs root) or as plain child processes.
sandbox-check: $(STAMP)
	$(PY) -m autograder.sandbox

clean:
	rm -rf $(VENV) demo-out course
