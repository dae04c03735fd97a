# The two commands of the README: `make demo` and `make test`. Each installs what is missing
# (OpenBLAS, libpng, libjpeg-turbo, python3), builds, and runs. `make test` runs `make check` first, then the tests.
# `make bench` runs the kernel benchmarks in release mode; `make bench-peers` and
# `make bench-models` compare them with other runtimes.
#
# `make check` is every habit CI enforces, each also a target of its own:
#   lint       swift-format lint --strict against .swift-format
#   warnings   a release build with warnings as errors
#   check-api  the public symbols against tools/public-api.txt (`make api-list` rewrites it)
#   docs       the DocC catalog, with warnings as errors

SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
FORMATTED := Sources Tests Benchmarks Package.swift

.PHONY: deps demo build test check lint warnings check-api api-list docs bench bench-peers bench-models format python python-venv wheel test-python test-scale test-coremltools-ops bench-python tsan tsan-ci asan fuzz fuzz-smoke soak leaks

deps:
	@missing=""; \
	dpkg -s libopenblas-dev >/dev/null 2>&1 || missing="$$missing libopenblas-dev"; \
	dpkg -s libpng-dev >/dev/null 2>&1 || missing="$$missing libpng-dev"; \
	dpkg -s libjpeg62-turbo-dev >/dev/null 2>&1 || missing="$$missing libjpeg62-turbo-dev"; \
	command -v python3 >/dev/null 2>&1 || missing="$$missing python3"; \
	python3 -c "import ensurepip" >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
		echo "Installing$$missing"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing; \
	fi

demo: deps
	swift run -c release tessera demo

# The debug build the tests, the API check and the docs use.
build: deps
	swift build --build-tests

test: check
	swift test --skip-build
	$(MAKE) --no-print-directory test-python

check: lint warnings check-api docs

lint:
	swift-format lint --strict --recursive $(FORMATTED)

warnings: deps
	swift build -c release -Xswiftc -warnings-as-errors

check-api: build
	python3 tools/check-public-api.py --bin-path "$$(swift build --show-bin-path)"

api-list: build
	python3 tools/check-public-api.py --bin-path "$$(swift build --show-bin-path)" --update

docs: build
	tools/build-docs.sh "$$(swift build --show-bin-path)"

bench: deps
	swift run -c release TesseraBenchmarks $(ARGS)

bench-peers: deps
	bash Benchmarks/peers/run.sh

# Tessera's model workloads next to ONNX Runtime and PyTorch, one table (env: MODELS_DIR,
# RESULTS_DIR, PYTHON; ARGS go to compare_models.py, e.g. ARGS="--idle-wait 0").
bench-models: deps
	bash Benchmarks/peers/run_models.sh $(ARGS)

format:
	swift-format format --in-place --recursive $(FORMATTED)

# The Python package (python/): `make python` installs it into the venv below, building the C
# ABI library in release; `make test-python` runs its tests against the debug library that
# `swift build` made (no release build); `make wheel` builds a wheel that carries the Swift
# runtime and OpenBLAS (.build/dist/) and checks it in a fresh venv without the toolchain.
# PY_VENV may point at another venv.
PY_VENV ?= .build/python-venv
PY := $(PY_VENV)/bin/python
PY_TEST_PACKAGES := numpy pillow pytest coremltools

$(PY):
	python3 -m venv $(PY_VENV)

python-venv: $(PY)
	@$(PY) -c "import numpy, PIL, pytest, coremltools" 2>/dev/null || \
		$(PY) -m pip install -q --disable-pip-version-check $(PY_TEST_PACKAGES)

python: deps python-venv
	$(PY) -m pip install -q --disable-pip-version-check ./python

test-python: deps python-venv
	swift build --product TesseraCoreMLC
	TESSERA_LIBRARY=$(CURDIR)/.build/debug/libTesseraCoreMLC.so PYTHONPATH=$(CURDIR)/python \
		$(PY) -m pytest -q -p no:cacheprovider --ignore=python/tests/scale python/tests

wheel: deps python-venv
	$(PY) python/tools/build_wheel.py --output .build/dist
	$(PY) python/tools/check_wheel.py --wheel-dir .build/dist

# Ray Data and MLServer (large installs, so not in `make test`; their own venv), against the
# release library.
SCALE_VENV ?= .build/python-scale-venv

test-scale: deps
	swift build -c release --product TesseraCoreMLC
	@[ -x $(SCALE_VENV)/bin/python ] || python3 -m venv $(SCALE_VENV)
	@$(SCALE_VENV)/bin/python -c "import ray, mlserver, pytest, requests" 2>/dev/null || \
		$(SCALE_VENV)/bin/python -m pip install -q --disable-pip-version-check "ray[data]" mlserver pytest requests
	TESSERA_LIBRARY=$(CURDIR)/.build/release/libTesseraCoreMLC.so PYTHONPATH=$(CURDIR)/python \
		$(SCALE_VENV)/bin/python -m pytest -q -p no:cacheprovider python/tests/scale

# coremltools' own op tests (from its wheel) with Tessera installed as its backend.
test-coremltools-ops: python
	@$(PY) -c "import scipy" 2>/dev/null || $(PY) -m pip install -q --disable-pip-version-check scipy
	$(PY) python/tools/run_coremltools_op_tests.py $(ARGS)

# tessera.coreml.MLModel.predict vs ONNX Runtime's InferenceSession.run from Python (M1, M3).
bench-python: python
	bash Benchmarks/peers/run_python.sh $(ARGS)

# Reliability (Docs/Reliability.md), none of it part of `make test`:
#   tsan / asan   the Swift tests under ThreadSanitizer / AddressSanitizer (own build
#                 directories, built once); FILTER=… narrows the run; any report fails it
#   tsan-ci       ThreadSanitizer over the suites that share models, graphs, buffers and
#                 states across threads (TSAN_CI_SUITES; what .ci/run runs, with `make asan`)
#   fuzz          one libFuzzer target for SECONDS (default 30): make fuzz TARGET=spec SECONDS=60;
#                 TARGET=all runs each in turn
#   fuzz-smoke    every fuzz target for 20 s (what .ci/run runs after `make test`); the
#                 fuzz build is debug (FUZZ_CONFIG=release for an optimized one, for long runs)
#   soak          64 concurrent tasks predicting on one model, against the serial outputs,
#                 with RSS at start and end (release build); ARGS go to the soak
#   leaks         valgrind's memcheck over COUNT (default 1000) predictions and loads,
#                 failing loads included (debug build; LEAKS_CONFIG=release for the
#                 optimized one): nothing definitely lost
FILTER ?=
TARGET ?= all
SECONDS ?= 30
COUNT ?= 1000

tsan: deps
	tools/sanitize.sh thread $(FILTER)

# The concurrency, executor, buffer-pool, plan-cache, model-load, prediction, MLState, bridge,
# memory-limit, fuzz-finding, prediction-replay and strided-cursor suites (a `swift test
# --filter` pattern).
TSAN_CI_SUITES = StridedRowCursorTests|ConcurrentPredictionTests|GraphConcurrencyTests|LoweringConcurrencyTests|BufferPoolTests|GraphExecutionTests|PlanCacheTests|State[A-Za-z]*Tests|APIPredictionTests|APICompileTests|BatchPredictionTests|MLTensorShapedArrayBridgeTests|MemoryLimitTests|FuzzFindingTests|InMemoryLoadTests|PredictionReplayTests

tsan-ci: deps
	tools/sanitize.sh thread '$(TSAN_CI_SUITES)'

asan: deps
	tools/sanitize.sh address $(FILTER)

fuzz: deps
	tools/fuzz.sh $(TARGET) $(SECONDS)

fuzz-smoke: deps
	tools/fuzz.sh all 20

soak: deps
	swift run -c release TesseraSoak $(ARGS)

leaks: deps
	tools/leaks.sh $(COUNT)
