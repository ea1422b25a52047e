#!/usr/bin/env bash
# What one training step's host code issues on the cuda target (T=32, L=1,
# B=4096; I=H=8 keeps the null device's CPU GEMMs cheap, the counts do not
# depend on I and H): kernel launches, GEMM calls, synchronizations and
# device allocations, as rnn-run --json reports them, for the default (arena
# and graph replay), eager launches (--no-cuda-graph) and per-step
# allocation (--no-arena). Runs on the null CUDA device when no GPU driver is
# given: RNNRT_LIBCUDA/RNNRT_LIBCUBLAS default to build/lib/libnullcuda.so.
#   bench/cuda_host_counts.sh [BUILD_DIR]
set -euo pipefail
B=${1:-$(dirname "$0")/../build}
if [ ! -x "$B/bin/rnn-run" ]; then
  echo "cuda_host_counts.sh: no rnn-run in $B/bin (build it, or give the build directory)" >&2
  exit 2
fi
export RNNRT_LIBCUDA=${RNNRT_LIBCUDA:-$B/lib/libnullcuda.so}
export RNNRT_LIBCUBLAS=${RNNRT_LIBCUBLAS:-$B/lib/libnullcuda.so}
echo "driver: $RNNRT_LIBCUDA"
printf '%-5s %-16s %6s %9s %6s %5s %11s\n' cell mode block launches gemm syncs allocations
for cell in lstm gru; do
  for m in "" --no-cuda-graph --no-arena; do
    # Its output first: where rnn-run fails, its own line ends the script.
    out=$("$B/bin/rnn-run" --preset=$cell --target=cuda --seq-len=32 \
      --batch=4096 --input-size=8 --hidden-size=8 --iters=2 --warmup=0 \
      --json $m)
    printf '%s' "$out" | python3 -c 'import sys, json
j = json.load(sys.stdin)
print("%-5s %-16s %6d %9d %6d %5d %11d" % (sys.argv[1], sys.argv[2] or "default",
      j["gemm_block"], j["launches"], j["gemm_calls"], j["syncs"], j["allocations"]))' "$cell" "$m"
  done
done
