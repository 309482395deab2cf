# Two commands on a fresh machine:
#   make run    the main job: a short tournament of the baselines (table + runs/quick/tournament.png)
#   make test   the test suite (the same command .ci/run calls)
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install -q -c constraints.txt
STAMP := $(VENV)/.installed

.PHONY: run test lint bench install clean

$(STAMP): pyproject.toml constraints.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(PIP) -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/spades tournament --quick --out runs/quick

test: $(STAMP)
	$(BIN)/ruff check spades_env training tests benchmarks
	$(BIN)/python -m pytest -n 2 -q

bench: $(STAMP)
	$(BIN)/python benchmarks/aec_throughput.py

clean:
	rm -rf $(VENV)
