#!/usr/bin/env bash
# GPU session, call 1 (about 7 minutes): probe, unit tests, smoke runs
# against the reference data, per-step counts, the cuda library through
# rnnc.torch (pytest), compute-sanitizer memcheck on three small shapes, and
# bench/gpu_vs_cudnn.py at B=4096 (T=32, I=H=256, L=1 and 2, resets 0 and
# 5%, fp32 and TF32). From the
# repository root with the bundle carried as .gpu:
#
#   OUT=$OUT bash .gpu/call1.sh
#
# Logs to $OUT/call1.log (and stdout). Each stage has its own timeout so the
# call ends inside the 10-minute limit and the log always comes back.
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/call1.log") 2>&1
export PYTHONUNBUFFERED=1
stage() { echo; echo "##### $* ($(date +%T))"; }

stage probe
uname -m
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || true
python3 -c 'import torch; print("torch", torch.__version__, "cudnn", torch.backends.cudnn.version())'
source .gpu/unpack.sh

stage unit tests
for t in RNNCudaDeviceTests RNNCudaRuntimeTests RNNRuntimeTests; do
  timeout 120 .gpu/unittests/$t --gtest_brief=1; echo "$t rc=$?"
done

stage smoke
D=test/Integration/data
S=/tmp/smoke
mkdir -p $S
for m in "" "--no-cuda-graph" "--no-arena" "--tf32"; do
  timeout 60 rnn-run --preset=lstm --target=cuda --inputs=$D/lstm_l2_wide_random.in.npz --outputs=$S/l.npz $m
  echo "lstm $m rc=$?"
  timeout 20 rnn-npz-compare $S/l.npz $D/lstm_l2_wide_random.ref.npz --rtol=1e-4 | tail -2
done
timeout 60 rnn-run --preset=gru --target=cuda --inputs=$D/gru_l2_wide_random.in.npz --outputs=$S/g.npz
echo "gru rc=$?"
timeout 20 rnn-npz-compare $S/g.npz $D/gru_l2_wide_random.ref.npz --rtol=1e-4 | tail -2

stage counts per step
for cell in lstm gru; do for m in "" "--no-cuda-graph" "--no-arena"; do
  echo "$cell $m: $(timeout 60 rnn-run --preset=$cell --target=cuda --seq-len=32 --json --iters=3 $m |
    python3 -c 'import sys,json; j=json.load(sys.stdin); print({k: j[k] for k in ("launches","gemm_calls","syncs","allocations","cuda_graph","step_ms")})')"
done; done

stage cuda library and rnnc.torch on CUDA tensors
# The package from the source tree; the libraries rnn-compile (bundle) links.
export RNNC_CACHE_DIR=/tmp/rnnc-cache
timeout 240 env PYTHONPATH=$PWD/python python3 -m pytest -q \
  python/tests/test_torch_cuda.py 2>&1 | tail -25
echo "test_torch_cuda rc=${PIPESTATUS[0]}"

stage compute-sanitizer
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for a in "--preset=lstm --inputs=$D/lstm_l2_wide_random.in.npz" \
         "--preset=gru --inputs=$D/gru_l1_random.in.npz --remat=chunk:3" \
         "--preset=lstm --seq-len=3 --batch=3 --input-size=300 --hidden-size=300"; do
  timeout 90 $CS --tool memcheck --print-limit 5 --error-exitcode 9 \
    rnn-run --target=cuda --no-cuda-graph $a --iters=1 --warmup=0 2>&1 | tail -4
  echo "memcheck rc=${PIPESTATUS[0]}"
done
# The cuDNN comparison comes in the first call: a loan may end after one.
stage bench B=4096
RR=$(command -v rnn-run)
timeout 260 python3 bench/gpu_vs_cudnn.py --rnn-run=$RR --batch=4096 \
  --layers=1,2 --reset-prob=0,0.05 --tf32=both --rounds=1 --iters=10 \
  --warmup=3 | tee "$OUT/bench-b4096.txt"
echo "bench rc=${PIPESTATUS[0]}"
stage done
