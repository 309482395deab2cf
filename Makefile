# Two commands on a fresh machine:
#   make run    the main job: the shipped policy against the baselines under three rule settings
#               (tournament, house, Blind Nil off: a table per rules + runs/matrix/matrix.png)
#   make test   the test suite (the same command .ci/run calls)
#   make docs   the docs site into site/ (mkdocs build --strict)
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install -q -c constraints.txt
STAMP := $(VENV)/.installed

.PHONY: run train-policy train-policy-v2 train-policy-v3 train-policy-v4 train-policy-v5 train-policy-2p tournament test lint bench install clean clean-numba presets wheel-smoke rllib-smoke docs

$(STAMP): pyproject.toml constraints.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(PIP) -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/spades matrix spades4_v1 --games 400 --opponents heuristic --out runs/matrix

# the whole lineage of a rules-family policy (BC, then PPO stages) from committed configs, into
# runs/family (hours on 2 cores); rerun to resume: finished stages are skipped
train-policy: $(STAMP)
	$(BIN)/python -m training.pipeline configs/train/pipeline.yaml

# spades4_net_v2's lineage from spades4_net_v1: L3's labels at its full budget, then the
# suit-augmented fit, into runs/v2 (about 1 h 55 min)
train-policy-v2: $(STAMP)
	$(BIN)/python -m training.pipeline configs/train/pipeline_v2.yaml

# spades4_net_v3's lineage: spades4_net_v2's stage, its tournament decisions fitted to
# spades4_net_v1's own policy instead of L3's values, into runs/v3 (about 1 h on 2 cores)
train-policy-v3: $(STAMP)
	$(BIN)/python -m training.pipeline configs/train/pipeline_v3.yaml

# spades4_net_v4's lineage (the network spades4_v3 searches with): spades4_net_v3's stage, its
# house decisions also fitted to spades4_net_v1's own policy, into runs/v4 (about 1 h on 2 cores)
train-policy-v4: $(STAMP)
	$(BIN)/python -m training.pipeline configs/train/pipeline_v4.yaml

# spades4_net_v5's lineage: spades4_net_v4 fine-tuned by PPO over rules whose Blind Nil exchange
# is 0 to 3 cards, into runs/v5 (about 9 min on one core)
train-policy-v5: $(STAMP)
	$(BIN)/python -m training.pipeline configs/train/pipeline_v5.yaml

# the two-player policy's lineage (BC on L2, then PPO) into runs/two_player (about 40 min)
train-policy-2p: $(STAMP)
	$(BIN)/python -m training.pipeline configs/train/pipeline_2p.yaml

tournament: $(STAMP)
	$(BIN)/spades tournament --quick --out runs/quick

test: $(STAMP)
	$(BIN)/ruff check spades_env training tests benchmarks
	$(BIN)/python -m pytest -n 2 -q

# the docs site (mkdocs.yml, docs/) into site/: the docs extra installed in .venv, then
# mkdocs build --strict (any warning fails; it builds offline)
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): $(STAMP) pyproject.toml constraints.txt
	$(PIP) -e ".[docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# the rules presets ship as package data: configs/rules is the editable copy (a test checks they agree)
presets:
	cp configs/rules/*.yaml spades_env/presets/

# build the wheel, install it in a fresh venv, use it from outside the checkout
wheel-smoke: $(STAMP)
	.ci/wheel_smoke.sh

# RLlib on a two-node Ray cluster on this machine (loopback): the wrapper tests, then 2 PPO
# iterations with 2 env runners, env steps/s, `ray stop`. Ray lives in its own venv: ray[rllib]
# pins gymnasium==1.2.2 (the main venv keeps the newest). Port: make rllib-smoke RAY_PORT=6390
RLLIB_VENV ?= .venv-rllib
RLLIB_STAMP := $(RLLIB_VENV)/.installed
$(RLLIB_STAMP): pyproject.toml constraints.txt
	$(PY) -m venv $(RLLIB_VENV)
	$(RLLIB_VENV)/bin/pip install -q --upgrade pip
	$(RLLIB_VENV)/bin/pip install -q -c constraints.txt -e ".[rllib]" pytest
	touch $(RLLIB_STAMP)

rllib-smoke: $(RLLIB_STAMP)
	SPADES_REQUIRE_RAY=1 $(RLLIB_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/integrations/test_rllib.py
	RLLIB_BIN=$(RLLIB_VENV)/bin bash training/rllib_smoke.sh

bench: $(STAMP)
	$(BIN)/python benchmarks/aec_throughput.py

clean:
	rm -rf $(VENV) $(RLLIB_VENV)

# numba's cache does not notice a change in a module that a cached kernel inlines or calls
clean-numba:
	find spades_env training tests benchmarks -name '*.nbi' -delete -o -name '*.nbc' -delete
