#!/usr/bin/env bash
# GPU session, call 3 (under 10 minutes): TorchRL's triton backend as a
# peer. From the repository root with the bundle carried as .gpu:
#
#   OUT=$OUT bash .gpu/call3.sh
#
# TorchRL 0.14.1's recurrent_backend="triton" compiles and autotunes its
# kernels on the first call of each cell and mode: more than 150 s for one
# of them at H=256 on an H200, which kept the whole table of call1.sh from
# printing a row when that peer was in it. So:
# 1. bench/triton_warm.py, one process per cell (LSTM, GRU) and mode (fp32,
#    tf32, bf16), side by side: the compiles are CPU work and go to
#    Triton's on-disk cache; each prints how long its first step took.
# 2. bench/gpu_vs_cudnn.py with the peer (--triton=on) at B=4096, then
#    B=64 (T=32, I=H=256, L=1 and 2, resets 0 and 5%, the three modes),
#    rnn-run, cuDNN and TorchRL's triton in one process; tables to
#    $OUT/bench-triton-b*.txt, rows as JSON to $OUT/bench-triton-b*.jsonl.
# Logs to $OUT/call3.log (and stdout). Deadlines for a call of 585 s,
# cut to RNNC_CALL_SECONDS (stage.sh).
source "$(dirname "$0")/stage.sh"
begin_call call3

stage "triton warm-up (6 processes)"
pids=()
for cell in lstm gru; do for m in fp32 tf32 bf16; do
  timeout "$(left_until 300)" python3 bench/triton_warm.py --cell=$cell \
    --mode=$m > "$OUT/triton-warm-$cell-$m.txt" 2>&1 &
  pids+=($!)
done; done
for p in "${pids[@]}"; do wait "$p"; echo "warm rc=$?"; done
cat "$OUT"/triton-warm-*.txt | grep -v "^ *warnings.warn\|UserWarning"

bench_table bench-triton 4096 480 10 3 --triton=on
bench_table bench-triton 64 585 20 5 --triton=on
stage done
