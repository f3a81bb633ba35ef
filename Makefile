# The two commands of the README:
#   make tour   set up if needed, then walk through the chapter on "time flies like an arrow"
#   make test   set up if needed, then run every test
# Set-up (scripts/setup.sh) fetches pinned LibTorch and model wheels once; later runs skip it.
# `make setup CUDA=1` (and `make test CUDA=1`, ...) uses a CUDA build of LibTorch instead (needs a GPU).
SHELL := /bin/bash
CUDA ?= 0
TEXT ?= time flies like an arrow

# torch-sys links torch_cuda when the lib dir holds libtorch_cuda.so, which the full wheel has. Exported,
# so that the scripts' own cargo builds (make test's lanes run side by side) see the same LibTorch and never
# rebuild torch-sys for the other one.
ifeq ($(CUDA),1)
export LIBTORCH = $(firstword $(wildcard $(CURDIR)/.deps/venv-cuda/lib/python3*/site-packages/torch))
endif
CARGO := cargo

.PHONY: setup tour test test-gpu test-pages test-cargo notebooks book bench doctor grade handout fuzz clean-deps help

help:
	@echo "make tour    walk through the chapter's steps (sets up on first use)"
	@echo "make test    run every test (sets up on first use)"
	@echo "  make test-pages / make test-cargo   one of its two lanes alone (after a first make test)"
	@echo "make test-gpu   on a machine with an NVIDIA GPU: CUDA against the CPU, and against PyTorch on the GPU"
	@echo "make notebooks  start JupyterLab with the Rust kernel and the chapter notebooks"
	@echo "make book    the executed notebooks as a static site in target/book/ (readable offline)"
	@echo "make bench   time the attention variants in release mode (BENCH_PYTORCH=1: against PyTorch too)"
	@echo "make doctor  check LibTorch, CUDA and the model folder"
	@echo "make fuzz FUZZ_SECONDS=N     fuzz the grader's intake readers, N seconds each (nightly, cargo-fuzz)"
	@echo "make setup   only fetch LibTorch and the model (CUDA=1 for a CUDA build)"
	@echo "make grade SUBMISSIONS=DIR   grade a class's exercises, each student sandboxed (see exercises/README.md)"
	@echo "make handout DIR=DIR         write the students' copy (no solutions, no instructors' tests) and check it"
	@echo "  CLASSROOM=1                as a GitHub Classroom template, graded on every push"

setup:
	@CUDA=$(CUDA) scripts/setup.sh

# The first build compiles LibTorch's C++ bindings (torch-sys) and this crate: about 3 minutes on 2 cores,
# with no output of its own for most of it, so say so and show cargo's progress; later builds take seconds.
tour: setup
	@[ -x target/debug/anatomy ] || echo "[tour] first build of the anatomy command: LibTorch's C++ bindings take about 3 minutes on 2 cores (cargo's progress below); later runs start in seconds"
	@$(CARGO) build --package anatomy-cli
	$(CARGO) anatomy tour "$(TEXT)"

# Two lanes side by side from the start (scripts/lanes.sh): the pages a learner sees, which wait on a
# network, a kernel or a browser for much of their time, and `cargo test` (its build, then its tests), which
# keeps the cores busy. The pages lane first fetches and builds what needs nothing of this project's build
# (JupyterLab, the kernel, its warm-up: `notebooks.sh prepare`), so that on a fresh machine the kernel's
# build runs beside cargo's instead of after it; its first use of the anatomy command comes after that, when
# cargo's build is done. The tests that measure the whole machine (the hostile class's memory, the bench's
# times: `whole_machine::`) run last, with nothing else beside them, also when a lane failed, so that one
# run shows every failure.
test: setup
	scripts/lanes.sh pages "$(MAKE) --no-print-directory test-pages" cargo "$(MAKE) --no-print-directory test-cargo"; \
	  lanes=$$?; $(CARGO) test --workspace --no-fail-fast --test grading_hostile --test bench_pytorch -- whole_machine:: && exit $$lanes

# LibTorch's two OpenMP threads spin at every barrier, 300,000 times by default, before they sleep. Tests
# run side by side, each with those two threads, on these two cores: with the default, `cargo test -p
# anatomy-cli --test classify` took 73 s of CPU time; spinning 1,000 times (as scripts/kernel.py has the
# notebooks' kernels do), 57 s. cli.rs took 53 s with the default and 16 s with 1,000. Your own
# GOMP_SPINCOUNT or OMP_WAIT_POLICY is kept.
ifeq ($(origin OMP_WAIT_POLICY),undefined)
test test-pages test-cargo: export GOMP_SPINCOUNT ?= 1000
endif

# `make test`'s two lanes; each can be run alone once `make test` has set up (`test-cargo` leaves out the
# `whole_machine::` tests, which `make test` runs after both). After `prepare`, the first JupyterLab check,
# which waits on the browser the most, comes first. The second (the attention views' pictures, and Stop in
# chapter 02) waits on the browser too, and runs beside the book's checks, which need the executed
# notebooks.
test-pages:
	scripts/notebooks.sh prepare
	scripts/browser-check.sh
	scripts/notebooks.sh lab-check
	scripts/notebooks.sh run
	scripts/lanes.sh book "scripts/notebooks.sh book && scripts/book-check.sh && scripts/a11y-check.sh" \
	  jupyterlab "scripts/notebooks.sh lab-check 02-self-attention.ipynb 09-meet-the-transformers.ipynb"

# The cargo lane prepares chapter 12's examples first, with the command it builds anyway (`cargo anatomy`'s
# build: the tests then compile no dependency again), so that the pages lane's notebooks need no cargo of
# their own, which waited for cargo's lock on the build folder while the cargo lane worked (236 s of a
# fresh `make test`).
# A failure of either step is printed and the tests still run (they show it again, with the others).
test-cargo:
	-$(CARGO) build --package anatomy-cli --bin anatomy
	-scripts/notebooks.sh spam-examples "$$($(CARGO) metadata --format-version 1 --no-deps | \
	  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug/anatomy"
	$(CARGO) test --workspace --no-fail-fast -- --skip whole_machine::

# On a machine with an NVIDIA GPU (it fails at once, saying so, elsewhere): the modules, the tour, encode,
# training and decoding on CUDA against the CPU, and the bench against PyTorch on the same GPU, as one table
# (scripts/test-gpu.sh; its own build in target/cuda/, with make setup CUDA=1's LibTorch unless LIBTORCH
# names another).
test-gpu:
	scripts/test-gpu.sh

notebooks: setup
	scripts/notebooks.sh launch

# The book is made from the notebooks as `make test` executed them; without them, execute them first.
book: setup
	@ls target/executed-notebooks/*.ipynb >/dev/null 2>&1 || scripts/notebooks.sh run
	scripts/notebooks.sh book
	scripts/book-check.sh
	@echo "open target/book/index.html"

bench: setup
	$(CARGO) build --release --package anatomy-cli
	@if [ "$(BENCH_PYTORCH)" = 1 ]; then \
	  py=$$(scripts/reference-venv.sh | tail -n 1) && target/release/anatomy bench --pytorch "$$py"; \
	else target/release/anatomy bench; fi

grade: setup
	@[ -n "$(SUBMISSIONS)" ] || { echo "usage: make grade SUBMISSIONS=folder-with-one-folder-per-student"; exit 2; }
	$(CARGO) anatomy exercises grade "$(SUBMISSIONS)"

handout: setup
	@CLASSROOM=$(CLASSROOM) scripts/handout.sh "$(DIR)"

# The grader's intake readers under libFuzzer, each for FUZZ_SECONDS (needs no LibTorch: crates/intake).
FUZZ_SECONDS ?= 60
fuzz:
	scripts/fuzz.sh seed
	scripts/fuzz.sh run $(FUZZ_SECONDS)

doctor:
	@[ -f .deps/libtorch/.complete-2.13.0 ] || [ -f .deps/venv-cuda/.complete-2.13.0 ] || \
	  { echo "LibTorch is missing: run 'make setup' (it fetches LibTorch 2.13.0 into .deps/)"; exit 1; }
	$(CARGO) anatomy doctor

clean-deps:
	rm -rf .deps models
