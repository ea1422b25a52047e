#!/usr/bin/env bash
# GPU session, call 1 (under 10 minutes; a loan may end after it, so the
# table comes first). From the repository root with the bundle carried as
# .gpu:
#
#   OUT=$OUT bash .gpu/call1.sh     (a GPU session: gpu/session.sh)
#
# 1. The benchmark table, bench/gpu_vs_cudnn.py in one process per batch
#    size: B=4096, then B=64 (T=32, I=H=256), LSTM and GRU, L=1 and 2,
#    resets 0 and 5%, modes fp32, tf32 and bf16 (rnn-run --storage=bf16),
#    rnn-run (graph replay) against cuDNN (split-and-pack with resets), with
#    the peak memory of every side and a run-to-run bitwise check of
#    rnn-run's outputs and gradients (--determinism). Tables to
#    $OUT/bench-b4096.txt and bench-b64.txt, rows as JSON to
#    $OUT/bench-b*.jsonl. TorchRL's triton peer is left out here: its
#    first call per cell and mode compiles and autotunes for minutes
#    (bench/triton_warm.py), so call3.sh warms its cache first and then
#    runs the table with it.
#    Then rnn-run's recompute of the gates (--remat=gates) against saving
#    them, at B=4096, L=1 and 2.
# 2. rnnc.jax against a scanned GRUCell at Craftax's shapes on JAX's GPU
#    (bench/jax_vs_scan.py: training T=64, B=128, I=H=512; rollout
#    B=1024).
# 3. Per-step launch, GEMM, sync and allocation counts (rnn-run --json).
# 4. A torch.profiler trace of rnnc.torch on CUDA tensors and cuDNN in one
#    process (bench/gpu_profile.py), to $OUT/profile-lstm-b*.{json.gz,txt}.
# 5. ncu (if installed) of one LSTM train step (L=1, fp32, eager launches)
#    at each batch size: the first launch of every kernel, to
#    $OUT/ncu-lstm-b*.{ncu-rep,summary.txt,details.txt}.
# Logs to $OUT/call1.log (and stdout). Each stage has its own deadline
# (stage.sh: seconds into a call of 585 s, cut to RNNC_CALL_SECONDS), and
# the benchmark stages a --time-budget below it (no configuration starts
# after it, so the table ends cleanly), so that the call ends inside its
# time with everything it made under $OUT.
source "$(dirname "$0")/stage.sh"
begin_call call1

# The table. B=4096 gets until 250 s into the call, B=64 until 380 s; each
# starts no configuration in its last 40 s.
bench_table bench 4096 250 10 3 --determinism --triton=off
bench_table bench 64 380 20 5 --determinism --triton=off

stage "remat gates against none (B=4096)"
for cell in lstm gru; do for L in 1 2; do for r in none gates; do
  [ "$(left_until 420)" -gt 10 ] || break 3
  echo "$cell L=$L remat=$r: $(timeout "$(left_until 420 20)" rnn-run \
    --preset=$cell --target=cuda --layers=$L --seq-len=32 --batch=4096 \
    --input-size=256 --hidden-size=256 --remat=$r --iters=10 --warmup=3 \
    --json | python3 -c 'import sys, json
try:
    j = json.load(sys.stdin)
    print("step_ms", j["step_ms"]["median"], "peak", j["peak_bytes"]["measured"], "saved", j["saved_bytes"])
except ValueError:
    print("no JSON from rnn-run")')"
done; done; done

stage "rnnc.jax against a scanned GRUCell (Craftax's shapes)"
# Training step at T=64, B=128, I=H=512, 5% resets, and rollout at T=1,
# B=1024, in one process on JAX's GPU.
timeout "$(left_until 480)" env PYTHONPATH="$PWD/python" python3 \
  bench/jax_vs_scan.py --cell gru --T 64 --B 128 --I 512 --H 512 \
  --rollout-B 1024 --rounds 3 --iters 20 2>&1 | tail -4
echo "jax_vs_scan rc=${PIPESTATUS[0]}"

stage counts per step
for cell in lstm gru; do for m in "" "--no-cuda-graph"; do
  [ "$(left_until 495)" -gt 10 ] || break 2
  echo "$cell $m: $(timeout 10 rnn-run --preset=$cell --target=cuda --seq-len=32 --json --iters=3 $m |
    python3 -c 'import sys, json
try:
    j = json.load(sys.stdin)
    print({k: j.get(k) for k in ("launches", "gemm_calls", "syncs", "allocations", "cuda_graph", "step_ms")})
except ValueError:
    print("no JSON from rnn-run")')"
done; done
stage torch.profiler: rnnc.torch and cuDNN
timeout "$(left_until 530)" python3 bench/gpu_profile.py --out "$OUT" --cell=lstm --batch=4096,64 \
  --steps=3 --warmup=2 2>&1 | grep -v '^USDT'
echo "profile rc=${PIPESTATUS[0]}"

stage ncu
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -z "$NCU" ]; then
  echo "no ncu on this machine"
else
  "$NCU" --version | tail -1
  for B in 4096 64; do
    rep="$OUT/ncu-lstm-b$B"
    step=(rnn-run --preset=lstm --target=cuda --seq-len=32 "--batch=$B"
          --input-size=256 --hidden-size=256 --no-cuda-graph --iters=1
          --warmup=0)
    # The first launch of every kernel (rnnc's and cuBLAS's) of one step.
    timeout "$(left_until 585 35)" \
      "$NCU" --clock-control none --kernel-id '::regex:.*:1' --launch-count 40 --set basic \
      --section MemoryWorkloadAnalysis --export "$rep" --force-overwrite \
      "${step[@]}" > "$rep.log" 2>&1
    rc=$?
    echo "ncu B=$B rc=$rc"
    if [ ! -f "$rep.ncu-rep" ]; then
      tail -5 "$rep.log"
      # The first 30 launches, if the kernel filter is what failed.
      timeout "$(left_until 585 30)" \
        "$NCU" --clock-control none --launch-count 30 --set basic --export "$rep" \
        --force-overwrite "${step[@]}" >> "$rep.log" 2>&1
      echo "ncu B=$B (first 30 launches) rc=$?"
    fi
    if [ -f "$rep.ncu-rep" ]; then
      "$NCU" --import "$rep.ncu-rep" --print-summary per-kernel > "$rep.summary.txt" 2>&1
      "$NCU" --import "$rep.ncu-rep" --page details > "$rep.details.txt" 2>&1
      head -60 "$rep.summary.txt"
    else
      tail -5 "$rep.log"
    fi
  done
fi

stage done
