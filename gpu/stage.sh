# Sourced by gpu/call1.sh, call2.sh and call3.sh (and by gpu/session.sh,
# for pack): a call's start, stage headers, the time left of a call with a
# fixed budget ($SECONDS counts from the call's start), the benchmark
# table, and the packing of $OUT into the few files a GPU session brings
# back.
#
# A call's stages come in order of importance, each with a deadline: a
# number of seconds into a call of 585 s. RNNC_CALL_SECONDS (default 585)
# ends the call sooner: every deadline past it is cut to it, so that a
# short call (the second of a 15-minute window) runs its first stages in
# full, and gpu/session.sh stops it there.
# RNNC_STAGE_SECONDS (unset: no limit) caps what any one stage may take,
# and replaces the limits of single commands within a stage, which are
# sized for a GPU (gpu/dry-run.sh, which runs every stage at tiny sizes
# on the CPU, where a command's compiles can take longer than its run on
# a GPU).
CALL_SECONDS=${RNNC_CALL_SECONDS:-585}
STAGE_SECONDS=${RNNC_STAGE_SECONDS:-}

stage() {
  STAGE_START=$SECONDS
  echo; echo "##### $* ($(date +%T), ${SECONDS}s into the call)"
}
STAGE_START=0
# Starts call $1 (call1, ...): $OUT made, everything printed also logged
# to $OUT/$1.log, Python unbuffered; then the probe stage (the GPU, the
# driver, PyTorch, CUDA, cuDNN and Triton as this machine has them) and
# the bundle unpacked (tools on PATH: unpack.sh).
begin_call() {
  OUT=${OUT:-/tmp/out}
  mkdir -p "$OUT"
  exec > >(tee -a "$OUT/$1.log") 2>&1
  export PYTHONUNBUFFERED=1
  stage probe
  uname -m
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
    --format=csv || true
  python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
  python3 -c 'import triton; print("triton", triton.__version__)' ||
    echo "no triton: the TorchRL triton peer is left out"
  source .gpu/unpack.sh
  # gpu/dry-run.sh's stand-ins, before the bundle's tools.
  [ -z "${RNNC_DRY_RUN_SHIMS:-}" ] || export PATH="$RNNC_DRY_RUN_SHIMS:$PATH"
  export RNNC_CACHE_DIR=/tmp/rnnc-cache
}
# Seconds left until $1 seconds into the call (at most RNNC_CALL_SECONDS,
# and, under RNNC_STAGE_SECONDS, at most that long after the stage began),
# at least 1; with a second argument, at most that many (not under
# RNNC_STAGE_SECONDS).
left_until() {
  local end=$(($1 < CALL_SECONDS ? $1 : CALL_SECONDS)) cap=${2:-}
  if [ -n "$STAGE_SECONDS" ]; then
    cap=
    [ $((STAGE_START + STAGE_SECONDS)) -lt "$end" ] && end=$((STAGE_START + STAGE_SECONDS))
  fi
  local s=$((end - SECONDS))
  [ -n "$cap" ] && [ "$s" -gt "$cap" ] && s=$cap
  echo $((s > 0 ? s : 1))
}
# Packs what is under $1 into $2/NAME-small.tar.gz (texts, logs, JSON) and
# $2/NAME-large.tar (profiler reports and traces, already compressed),
# leaving out .npz files (rnn-run's outputs, up to hundreds of MB at
# B=4096, only compared on the machine). Each archive stays under 16 MiB:
# the largest files are left out of the large one, with their names in
# $2/NAME-left-out.txt.
pack() {
  local from=$1 to=$2 name=$3
  mkdir -p "$to"
  (cd "$from" && find . -type f ! -name '*.npz' ! -name '*.ncu-rep' \
     ! -name '*.json.gz' -print0 | tar -czf "$to/$name-small.tar.gz" \
     --null -T -)
  local list=() total=0 size f
  while IFS= read -r f; do
    size=$(stat -c %s "$from/$f")
    if [ $((total + size)) -lt $((15 * 1024 * 1024)) ]; then
      list+=("$f"); total=$((total + size))
    else
      echo "$f ($size bytes)" >> "$to/$name-left-out.txt"
    fi
  done < <(cd "$from" && find . -type f \( -name '*.ncu-rep' -o \
             -name '*.json.gz' \) -printf '%s %p\n' | sort -n | cut -d' ' -f2-)
  [ ${#list[@]} -gt 0 ] && (cd "$from" && tar -cf "$to/$name-large.tar" "${list[@]}")
  ls -l "$to"
}

# The table of bench/gpu_vs_cudnn.py (T=32, I=H=256, LSTM and GRU, L=1
# and 2, resets 0 and 5%, fp32, tf32 and bf16) at batch size $2 until $3
# seconds into the call (left_until), $4 measured and $5 warm-up steps, with
# the flags after them; the table to $OUT/$1-b$2.txt, rows as JSON to
# $OUT/$1-b$2.jsonl. No configuration starts in its last 40 s.
bench_table() {
  local name=$1 B=$2 end=$3 iters=$4 warmup=$5 left
  shift 5
  STAGE_START=$SECONDS
  left=$(left_until "$end")
  stage "$name B=$B (${left}s)"
  rm -f "$OUT/$name-b$B.jsonl"
  timeout "$left" python3 bench/gpu_vs_cudnn.py \
    --rnn-run="$(command -v rnn-run)" --batch="$B" --layers=1,2 \
    --reset-prob=0,0.05 --modes=fp32,tf32,bf16 --rounds=1 \
    --iters="$iters" --warmup="$warmup" \
    --time-budget=$((left > 60 ? left - 40 : 20)) \
    --json-out="$OUT/$name-b$B.jsonl" "$@" | tee "$OUT/$name-b$B.txt"
  echo "$name B=$B rc=${PIPESTATUS[0]}"
}
