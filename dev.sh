#!/usr/bin/env bash
# Set up, build, run and test rnnc.
#
#   ./dev.sh run [rnn-run flags]   install what is missing, build, run
#                                  rnn-run --preset=lstm (train step, CPU)
#   ./dev.sh test                  install what is missing, build, run every
#                                  test (lit: passes, integration, unit tests;
#                                  pytest: the rnnc Python package vs PyTorch,
#                                  and its CUDA tests with the CPU in place of
#                                  the GPU)
#   ./dev.sh build                 install what is missing and build
#   ./dev.sh test-sanitize         the same tests on a build with
#                                  AddressSanitizer and UBSan (build-sanitize/)
#   ./dev.sh bundle [DIR]          build, then pack the tools for a GPU machine
#                                  without LLVM (gpu/make-bundle.sh; default
#                                  DIR .gpu)
#   ./dev.sh test-bundle           pack into build/gpu-bundle, check that
#                                  the packed tools run with LLVM hidden,
#                                  then run the GPU session's calls from it
#                                  without a GPU (gpu/dry-run.sh, about 8
#                                  minutes)
#   ./dev.sh wheel [DIR]           build, then the self-contained wheel
#                                  (tools/package/make-wheel.py; default DIR
#                                  dist)
#   ./dev.sh test-wheel            build the wheel into build/wheel, check its
#                                  platform tag (auditwheel) and run it in a
#                                  fresh virtual environment with LLVM and
#                                  the toolchain hidden, also as a second
#                                  account (tools/package/test-wheel.sh)
#   ./dev.sh fuzz [RUNS] [SECONDS] the rnn-opt mutation fuzzer on the release
#                                  build (default 800 runs, about 40 s), 100
#                                  runs of rnn-compile's fuzzer (about 25 s),
#                                  1000 runs of a pass on another stage's IR
#                                  (tools/fuzz/fuzz-stages.py, about 2 minutes),
#                                  then the libFuzzer target rnn-fuzz
#                                  (build-fuzz/, clang) for SECONDS (default
#                                  60); fails on any crash, timeout or
#                                  internal error
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(cmake ninja-build ccache g++ python3 python3-pip git
          llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
          liblld-22-dev libgtest-dev libopenblas-dev zlib1g-dev libzip-dev
          patchelf)
# The libFuzzer build's compiler and runtime (./dev.sh fuzz only).
FUZZ_PACKAGES=(clang-22 libclang-rt-22-dev)
BUILD_DIR=${RNN_BUILD_DIR:-build}

# Installs PACKAGES and any packages given as arguments.
install_missing() {
  local missing=()
  for p in "${PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  echo "dev.sh: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

# PyTorch (the reference and the package's framework), pytest with
# pytest-xdist (a worker per core: a test and the compiles it starts run
# on one core), NumPy (the benchmarks and gen_reference.py write .npz files
# with it), Hypothesis (the argument fuzzer), the RL libraries the adapters
# and examples are checked against (TorchRL with TensorDict, sb3-contrib with
# Stable-Baselines3, rsl_rl, Gymnasium), auditwheel (the wheel's platform tag),
# JAX (rnnc.jax, and the FFI headers its handler is built against) with
# Flax (rnnc.flax, and the cells it is checked against) and gymnax (the
# JAX PPO example's environment), and the rnnc
# package itself, installed from python/ so that the tests import what a
# user's `pip install ./python` gives.
PYTHON_PACKAGES=(torch pytest pytest-xdist numpy hypothesis torchrl tensordict
                 sb3-contrib rsl-rl-lib gymnasium auditwheel "jax[cpu]" flax
                 gymnax)
install_python() {
  if ! python3 -c "import torch, pytest, xdist, numpy, hypothesis, torchrl, \
tensordict, sb3_contrib, rsl_rl, gymnasium, auditwheel, jax, flax, gymnax" \
      2>/dev/null; then
    echo "dev.sh: installing ${PYTHON_PACKAGES[*]}"
    python3 -m pip install -q "${PYTHON_PACKAGES[@]}" ||
      python3 -m pip install -q --break-system-packages "${PYTHON_PACKAGES[@]}"
  fi
  python3 -m pip install -q --no-deps ./python ||
    python3 -m pip install -q --no-deps --break-system-packages ./python
}

build() {
  install_missing
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release
  fi
  ninja -C "$BUILD_DIR" -j"$(nproc)"
}

case "${1:-}" in
  run)
    shift
    build
    "$BUILD_DIR/bin/rnn-run" --preset=lstm "$@"
    ;;
  test)
    # The Python packages first: the build compiles rnnc.jax's FFI handler
    # against the jaxlib it finds.
    install_missing
    install_python
    build
    ninja -C "$BUILD_DIR" check-rnn
    # Strict: a missing dependency or rnn-compile fails the run, and only
    # the want of a GPU may skip a test (python/tests/conftest.py); -rs
    # names every skip in the summary.
    # A worker per core; an idle worker takes tests queued for the other
    # (a few modules hold most of the time). The workers share the
    # session's cache of libraries (python/tests/conftest.py).
    PATH="$PWD/$BUILD_DIR/bin:$PATH" RNNC_TEST_STRICT=1 \
      python3 -m pytest -q -rs -n "$(nproc)" --dist worksteal python/tests
    # The CUDA tests with the CPU in place of the GPU (those that need a
    # real GPU skip), so that breakage of their test code shows here.
    PATH="$PWD/$BUILD_DIR/bin:$PATH" RNNC_TEST_STRICT=1 \
      RNNC_TEST_CUDA_AS_CPU=1 python3 -m pytest -q -rs -n "$(nproc)" \
      --dist worksteal python/tests/test_torch_cuda.py python/tests/test_jax_cuda.py
    ;;
  build)
    build
    ;;
  test-sanitize)
    install_missing
    dir=${RNN_SANITIZE_BUILD_DIR:-build-sanitize}
    if [ ! -f "$dir/build.ninja" ]; then
      cmake -G Ninja -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DRNN_SANITIZE=ON
    fi
    ninja -C "$dir" -j"$(nproc)"
    # Any report (leaks included) fails the test that triggers it; no
    # suppressions are needed.
    export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
    ninja -C "$dir" check-rnn
    ;;
  bundle)
    build
    gpu/make-bundle.sh "$BUILD_DIR" "${2:-.gpu}"
    ;;
  test-bundle)
    build
    gpu/make-bundle.sh "$BUILD_DIR" "$BUILD_DIR/gpu-bundle"
    gpu/test-bundle.sh "$BUILD_DIR/gpu-bundle"
    gpu/dry-run.sh "$BUILD_DIR/gpu-bundle"
    ;;
  wheel)
    build
    python3 tools/package/make-wheel.py "$BUILD_DIR" "${2:-dist}"
    ;;
  test-wheel)
    build
    install_python
    rm -rf "$BUILD_DIR/wheel"
    python3 tools/package/make-wheel.py "$BUILD_DIR" "$BUILD_DIR/wheel"
    wheel=$(ls "$BUILD_DIR"/wheel/rnnc-*.whl)
    python3 -m auditwheel show "$wheel" | tee "$BUILD_DIR/wheel/auditwheel.txt"
    tr -s ' \n' ' ' < "$BUILD_DIR/wheel/auditwheel.txt" |
      grep -q 'consistent with the following platform tag: "manylinux_2_35_x86_64"'
    tools/package/test-wheel.sh "$wheel"
    ;;
  fuzz)
    build
    python3 tools/fuzz/fuzz-mlir.py --runs "${2:-800}" --seed 1 \
      --rnn-opt "$BUILD_DIR/bin/rnn-opt" --out "$BUILD_DIR/fuzz-out" --quiet
    python3 tools/fuzz/fuzz-compile.py --runs 100 --seed 1 \
      --rnn-compile "$BUILD_DIR/bin/rnn-compile" \
      --out "$BUILD_DIR/fuzz-compile-out" --quiet
    python3 tools/fuzz/fuzz-stages.py --runs 1000 --seed 1 \
      --rnn-opt "$BUILD_DIR/bin/rnn-opt" --out "$BUILD_DIR/fuzz-stages-out" \
      --quiet
    install_missing "${FUZZ_PACKAGES[@]}"
    dir=${RNN_FUZZ_BUILD_DIR:-build-fuzz}
    if [ ! -f "$dir/build.ninja" ]; then
      CC=clang-22 CXX=clang++-22 cmake -G Ninja -S . -B "$dir" \
        -DCMAKE_BUILD_TYPE=Release -DRNN_FUZZ=ON
    fi
    ninja -C "$dir" -j"$(nproc)" rnn-fuzz
    tools/fuzz/run-libfuzzer.sh "${3:-60}" "$dir"
    ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d'
    exit 2
    ;;
esac
