# The two commands of the README: `make demo` and `make test`. Each installs OpenBLAS when it
# is missing, builds, and runs. `make bench` runs the kernel benchmarks in release mode;
# `make bench-peers` and `make bench-models` compare them with other runtimes.

SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)

.PHONY: deps demo test bench bench-peers bench-models format

deps:
	@if ! dpkg -s libopenblas-dev >/dev/null 2>&1; then \
		echo "Installing libopenblas-dev"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq libopenblas-dev; \
	fi

demo: deps
	swift run -c release tessera demo

test: deps
	swift build --build-tests
	swift test --skip-build

bench: deps
	swift run -c release TesseraBenchmarks $(ARGS)

bench-peers: deps
	bash Benchmarks/peers/run.sh

# Tessera's model workloads next to ONNX Runtime and PyTorch, one table (env: MODELS_DIR,
# RESULTS_DIR, PYTHON; ARGS go to compare_models.py, e.g. ARGS="--idle-wait 0").
bench-models: deps
	bash Benchmarks/peers/run_models.sh $(ARGS)

format:
	swift-format format --in-place --recursive Sources Tests Benchmarks Package.swift
