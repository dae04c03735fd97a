# The two commands of the README: `make demo` and `make test`. Each installs what is missing
# (OpenBLAS, python3), builds, and runs. `make test` runs `make check` first, then the tests.
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

.PHONY: deps demo build test check lint warnings check-api api-list docs bench bench-peers bench-models format

deps:
	@missing=""; \
	dpkg -s libopenblas-dev >/dev/null 2>&1 || missing="$$missing libopenblas-dev"; \
	command -v python3 >/dev/null 2>&1 || missing="$$missing python3"; \
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
