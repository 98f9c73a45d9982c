# The README's commands. PYTHON / VENV pick the interpreter and its virtualenv.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install demo test lint bench

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

install: $(BIN)/.installed

demo: install
	$(BIN)/signoff run customer-service --approve "order A-1001 arrived broken, can you refund it?"

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# pytest exits 5 when it collects nothing; that is not a failure of the checks above.
test: lint
	$(BIN)/python -m pytest -q; rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 5 ]

bench: install
	$(BIN)/python bench/engine_overhead.py
	$(BIN)/python bench/checkpoint_growth.py
