#!/usr/bin/env bash
# Runs a GPU session's calls (call1.sh, call2.sh, call3.sh, as the bundle
# carries them) on this machine, without a GPU, the way the device machine
# runs them: from a repository root with the bundle as .gpu. A device
# window is short and comes rarely; a call that stops on a renamed flag, a
# missing file or a script error wastes it.
#
#   gpu/dry-run.sh BUNDLE_DIR [CALL...]     (default: call1 call2 call3)
#
# Stand-ins, first on PATH (stage.sh puts $RNNC_DRY_RUN_SHIMS before the
# bundle's tools):
# * rnn-run --target=cuda runs on the bundle's null CUDA device
#   (libnullcuda.so as the driver and cuBLAS: host code, launches,
#   allocations and GEMMs, no kernel computing anything, so results and
#   bitwise comparisons mean nothing here), with every size flag made a
#   few elements (the null device computes the GEMMs on the CPU);
# * the benchmark scripts run on the CPU in their own test modes at tiny
#   shapes: gpu_vs_cudnn.py --dry-run (its tables start no configuration
#   after 10 s: the first rows and the rest listed), gpu_profile.py and
#   torch_cuda_replay.py on the CPU device, jax_vs_scan.py on JAX's CPU;
#   TorchRL's triton warm-up needs CUDA and says so;
# * nvidia-smi says there is no GPU; the tests that need one skip
#   (pytest), as do ncu and compute-sanitizer where this machine has none.
# Each call runs through gpu/session.sh (as on the device machine: its
# outputs packed into the few files the device tool brings back), with
# each stage given at most RNNC_STAGE_SECONDS (default 90).
#
# It fails if a call does not reach its last stage, if its outputs are not
# packed into at most 8 files, if call2 cut to 60 s (the second call of a
# short window) runs past 80 s or brings back nothing, if a line of its log
# is a script error (a Python traceback, an argument a script or a tool
# refuses, a tool's output that does not parse, a file or command not
# found, a shell error), or if a benchmark script or a test run that does
# not need a GPU reports a non-zero status.
set -euo pipefail
B=$(cd "$1" && pwd)
REPO=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$B/lib/libnullcuda.so" ] || {
  echo "FAIL: $B has no null CUDA device (lib/libnullcuda.so)"
  exit 1
}

W=$(mktemp -d)
LEFT="/tmp/rnnc /tmp/rnnc-cache /tmp/rnnc-dynamic /tmp/gpu-call1 /tmp/gpu-call2 /tmp/gpu-call3"
trap 'rm -rf "$W" $LEFT' EXIT
# The repository root as the device machine sees it: the tree, and the
# bundle as .gpu.
mkdir -p "$W/repo" "$W/shim"
for entry in "$REPO"/*; do
  [ "$(basename "$entry")" = build ] || ln -s "$entry" "$W/repo/"
done
ln -s "$B" "$W/repo/.gpu"

PYTHON=$(command -v python3)
cat > "$W/shim/python3" <<EOF
#!/usr/bin/env bash
# The calls' benchmark scripts, on the CPU at tiny shapes.
case "\${1:-}" in
  bench/gpu_vs_cudnn.py) set -- "\$@" --dry-run --iters=2 --warmup=1 \\
    --time-budget=10 ;;
  bench/gpu_profile.py) set -- "\$@" --device=cpu --seq-len=3 --size=4 \\
    --batch=5,2 ;;
  bench/torch_cuda_replay.py) set -- "\$@" --device cpu --T 3 --B 2 \\
    --I 4 --H 4 --iters 2 --warmup 1 ;;
  bench/jax_vs_scan.py) set -- "\$@" --T 3 --B 2 --I 4 --H 4 \\
    --rollout-B 2 --rounds 1 --iters 2 ;;
esac
exec "$PYTHON" "\$@"
EOF
cat > "$W/shim/rnn-run" <<'EOF'
#!/usr/bin/env bash
# The next rnn-run on PATH (the bundle's); on the cuda target at a few
# elements.
args=("$@")
if [[ " $* " == *" --target=cuda "* ]]; then
  args=()
  for a in "$@"; do
    case "$a" in
      --seq-len=*) args+=(--seq-len=5) ;;
      --batch=*) args+=(--batch=3) ;;
      --input-size=*) args+=(--input-size=6) ;;
      --hidden-size=*) args+=(--hidden-size=7) ;;
      --gemm-rows=*) args+=(--gemm-rows=6) ;;
      *) args+=("$a") ;;
    esac
  done
fi
PATH=${PATH//"$RNNC_DRY_RUN_SHIMS:"/} exec rnn-run "${args[@]}"
EOF
printf '#!/bin/sh\necho "nvidia-smi: no GPU (gpu/dry-run.sh)"\n' \
  > "$W/shim/nvidia-smi"
chmod +x "$W/shim"/*

cd "$W/repo"
unset LD_LIBRARY_PATH RNNC_CUDA_TOOLKIT
export PATH="$W/shim:$PATH" RNNC_DRY_RUN_SHIMS=$W/shim
export RNNRT_LIBCUDA=$B/lib/libnullcuda.so RNNRT_LIBCUBLAS=$B/lib/libnullcuda.so
unset RNNC_CALL_SECONDS
export RNNC_STAGE_SECONDS=${RNNC_STAGE_SECONDS:-90}
# The status lines of what must work without a GPU.
CHECKED='^(bench(-triton)? B=[0-9]+|profile|jax_vs_scan|torch_cuda_replay|test_torch_cuda|test_jax_cuda|RNNCudaRuntimeTests|RNNRuntimeTests) rc='
status=0
# Reports $2 (the problems found, one per line; none: nothing) of what $1
# names, then $3 (a line on where they happened), and keeps the working
# folder for a look.
report() {
  [ -n "$2" ] || return 0
  echo "FAIL: $1:"
  echo "$2" | head -30
  [ -z "${3:-}" ] || echo "$3"
  trap 'rm -rf $LEFT' EXIT
  status=1
}
calls=("${@:2}")
[ ${#calls[@]} -gt 0 ] || calls=(call1 call2 call3)
for call in "${calls[@]}"; do
  out=$W/out-$call
  mkdir -p "$out"
  started=$SECONDS
  OUT=$out bash .gpu/session.sh "$call" 560 > /dev/null 2>&1 || true
  log=$out/$call.log
  echo "$call: $((SECONDS - started)) s, $(grep -cE "$CHECKED" "$log" 2>/dev/null) statuses checked"
  problems=$(
    [ -f "$log" ] || echo "no $call.log among the files brought back"
    [ -f "$out/$call-small.tar.gz" ] || echo "outputs not packed"
    files=$(find "$out" -type f | wc -l)
    [ "$files" -le 8 ] || echo "$files files to bring back (at most 8)"
    grep -q "^##### done" "$log" || echo "did not reach its last stage"
    grep -nE 'Traceback|JSONDecodeError|^usage:|error: (unrecognized|argument)|Unknown command line argument|for the --[a-z0-9-]+ option|no JSON from|No such file|command not found|syntax error|unbound variable|\.sh: line [0-9]+:' "$log"
    grep -E "$CHECKED" "$log" | grep -v ' rc=0\b'
  ) || true
  # With the stages' start times, to tell a slow stage from a stuck one.
  report "$call ($out/$call.log)" "$problems" "stages: $(
    grep -o '^##### .*s into the call' "$log" 2>/dev/null |
      sed 's/^##### //; s/ ([0-9:]*, / @ /; s/ into the call//' |
      paste -sd ';' -)"
done
# The second call of a 15-minute window has little time left: call2 cut
# to 60 s stops by then (its deadlines cut to it, the rest stopped), and
# still brings back its log and its outputs packed.
if [[ " ${calls[*]} " == *" call2 "* ]]; then
  out=$W/out-call2-cut
  mkdir -p "$out"
  started=$SECONDS
  OUT=$out bash .gpu/session.sh call2 60 > /dev/null 2>&1 || true
  took=$((SECONDS - started))
  echo "call2 cut to 60 s: $took s"
  problems=$(
    [ "$took" -le 80 ] || echo "took $took s"
    [ -f "$out/call2-small.tar.gz" ] || echo "outputs not packed"
    grep -q "^##### session.sh: call2 ended after" "$out/call2.log" ||
      echo "its log does not say where it ended"
  ) || true
  report "call2 cut to 60 s ($out)" "$problems"
fi
[ $status -eq 0 ] && echo "gpu/dry-run.sh: ok"
exit $status
