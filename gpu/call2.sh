#!/usr/bin/env bash
# GPU session, call 2 (about 8 minutes): bench/gpu_vs_cudnn.py at B=64
# (T=32, I=H=256, L=1 and 2, resets 0 and 5%, fp32 and TF32), graph replay
# against eager launches at B=64, the RUN lines of test/GPU/run-cuda.test
# (its bitwise check is ~260 runs of rnn-run, 8 at a time), and
# bench/bf16_storage.py for the LSTM. From the repository root:
#
#   OUT=$OUT bash .gpu/call2.sh
#
# The tables go to $OUT/bench-*.txt, the log to $OUT/call2.log.
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/call2.log") 2>&1
export PYTHONUNBUFFERED=1
stage() { echo; echo "##### $* ($(date +%T))"; }
source .gpu/unpack.sh
RR=$(command -v rnn-run)

stage bench B=64
timeout 120 python3 bench/gpu_vs_cudnn.py --rnn-run=$RR --batch=64 \
  --layers=1,2 --reset-prob=0,0.05 --tf32=both --rounds=1 --iters=20 \
  --warmup=5 | tee "$OUT/bench-b64.txt"
echo "bench rc=${PIPESTATUS[0]}"

stage bench B=64 eager launches
timeout 60 python3 bench/gpu_vs_cudnn.py --rnn-run=$RR --batch=64 \
  --layers=1 --reset-prob=0 --tf32=off --rounds=1 --iters=20 --warmup=5 \
  --rnn-run-flag=--no-cuda-graph | tee "$OUT/bench-b64-eager.txt"
echo "bench rc=${PIPESTATUS[0]}"
stage run-cuda.test
timeout 330 python3 .gpu/run-test-lines.py -k test/GPU/run-cuda.test
echo "run-cuda.test rc=$?"

# Last, as it matters least: bf16 storage on the GPU (cuBLAS's bf16 GEMM)
# against f32, and its error vs the float64 reference.
stage bench bf16 storage
timeout 60 python3 bench/bf16_storage.py --rnn-run=$RR --target=cuda \
  --cells=lstm --rounds=1 --iters=5 | tee "$OUT/bench-bf16.txt"
echo "bench rc=${PIPESTATUS[0]}"

stage done
