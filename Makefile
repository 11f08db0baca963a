# Thin wrapper over CMake for the two everyday commands:
#   make run   build, then run the CLI on a bundled matrix (GPU if present, else CPU)
#   make test  build, then run every test through ctest
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=

.PHONY: all build run test clean install

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# a real graph from data/: its statistics, then SpMM with 64 columns on the best
# backend (CUDA if a GPU is present, else CPU), timed and checked against ref
run: build
	$(BUILD)/spx info data/cora.mtx
	$(BUILD)/spx spmm data/cora.mtx --n 64 --dtype f32 --repeat 20 --check --explain

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
