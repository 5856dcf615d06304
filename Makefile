# Thin wrapper over CMake. See README.md.
JOBS ?= $(shell nproc)
CMAKE ?= cmake
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
PREFIX ?= /usr/local
FUZZ_SECONDS ?= 60
# `make soak`: virtual seconds of traffic per seed, and the seeds.
SOAK_SECONDS ?= 600
SOAK_SEEDS ?= 1 2 3
# The threaded tests, run again under ThreadSanitizer by `make check`.
TSAN_TESTS ?= test_socket test_socket_flood

.PHONY: all build demo check deps deps-build layers asan tsan tsan-tests fuzz-build fuzz soak bench install format format-check clean

all: build

# Release build of everything (tests too when cmocka is installed).
build: deps-build
	$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	$(CMAKE) --build $(BUILD) -j $(JOBS)

# The packages the library and the binary need (make, make demo), and
# those of every test, fuzzer and benchmark (make check).
deps-build:
	@scripts/install-deps.sh build

deps:
	@scripts/install-deps.sh check

asan: deps
	$(CMAKE) -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DNS_TESTS=ON -DNS_WERROR=ON -DNS_SANITIZE=address,undefined >/dev/null
	$(CMAKE) --build $(ASAN_BUILD) -j $(JOBS)

tsan: deps
	$(CMAKE) -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DNS_TESTS=ON -DNS_WERROR=ON -DNS_SANITIZE=thread >/dev/null
	$(CMAKE) --build $(TSAN_BUILD) -j $(JOBS)

tsan-tests: deps
	$(CMAKE) -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DNS_TESTS=ON -DNS_WERROR=ON -DNS_SANITIZE=thread >/dev/null
	$(CMAKE) --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TESTS)

fuzz-build: deps
	CC=clang $(CMAKE) -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DNS_FUZZ=ON -DNS_TESTS=OFF -DNS_WERROR=ON \
		-DNS_SANITIZE=address,undefined >/dev/null
	$(CMAKE) --build $(FUZZ_BUILD) -j $(JOBS)

# Every test, under ASan+UBSan, ending with "N passed, N failed".
check: asan tsan-tests fuzz-build
	@TSAN_TESTS="$(TSAN_TESTS)" scripts/check.sh $(ASAN_BUILD) $(FUZZ_BUILD) $(TSAN_BUILD)

# Installs its packages, builds only the nstack binary (compiler output in
# $(BUILD)/demo-build.log) and runs the demo.
demo: deps-build
	@scripts/demo.sh $(BUILD)

fuzz: fuzz-build
	@scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The soak (tests/sim/sim_soak.c) for SOAK_SECONDS of virtual time per seed,
# release build (about 3.7 minutes per seed); `make check` runs it for 8
# virtual seconds under ASan.
soak: build
	@for seed in $(SOAK_SEEDS); do \
		echo "== sim_soak seed $$seed, $(SOAK_SECONDS) virtual s"; \
		NS_SOAK_SECONDS=$(SOAK_SECONDS) NS_SOAK_SEED=$$seed $(BUILD)/sim_soak || exit 1; \
	done

bench: deps build
	@scripts/bench.sh $(BUILD)

install: build
	$(CMAKE) --install $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')

# The one-way layer rule (docs/architecture.md).
layers:
	@scripts/check-layers.sh

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
