# Everything a fresh clone needs: `make run` and `make test` create .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
RUN_STAMP := $(VENV)/.installed
# Four workers on two cores: a Pilot test spends about a third of its time waiting for the
# app to go idle, and the tmux and CLI tests wait on other processes, so two workers left
# the cores idle (measured: 185 s with three, 145-152 s with four on 2 cores).
PYTEST_WORKERS ?= 4

.PHONY: run test lint bench clean corpus install

# First runs take 20-40 s (pip downloads and builds): say what each step does and
# let pip show its own progress, so a fresh clone never sits silent.
PIP_PROGRESS := --progress-bar on

$(BIN)/python:
	@echo "==> [1/2] Creating the virtual environment in $(VENV) (first run only)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install $(PIP_PROGRESS) --upgrade pip

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	@echo "==> [2/2] Installing planshell and its dependencies into $(VENV) (pip shows its progress)"
	$(BIN)/python -m pip install $(PIP_PROGRESS) -e .
	touch $@
	@echo "==> Ready: planshell is installed in $(VENV)"

$(STAMP): pyproject.toml | $(BIN)/python
	@echo "==> [2/2] Installing planshell with its test and lint tools into $(VENV) (pip shows its progress)"
	$(BIN)/python -m pip install $(PIP_PROGRESS) -e '.[dev]'
	touch $@ $(RUN_STAMP)

run: $(RUN_STAMP)
	$(BIN)/planshell $(ARGS)

# `make install` puts a `planshell` command on PATH for use in any project: a symlink in
# $(BINDIR) to this checkout's .venv, so a `git pull` here updates the command too.
BINDIR ?= $(HOME)/.local/bin

install: $(RUN_STAMP)
	mkdir -p $(BINDIR)
	ln -sf $(abspath $(BIN))/planshell $(BINDIR)/planshell
	@echo "==> Installed: $(BINDIR)/planshell -> $(abspath $(BIN))/planshell"
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) echo "==> $(BINDIR) is not on your PATH: add it, e.g. export PATH=\"$(BINDIR):\$$PATH\"";; esac
	@echo "==> Use it in any project: cd project && planshell   (or: planshell -C DIR)"

test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check planshell tests bench
	$(BIN)/ruff format --check planshell tests bench
	$(BIN)/lint-imports
	$(BIN)/mypy planshell
	$(BIN)/typos

corpus: $(STAMP)
	$(BIN)/python ../shared/bash-corpus/score.py planshell.shell.guard:is_read_only ../shared/bash-corpus/public.jsonl

bench: $(STAMP)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
