#!/usr/bin/env bash
# Runs the libFuzzer target rnn-fuzz for SECONDS (default 60) from the seed
# inputs (the lit tests' MLIR, split at `// -----`, written by
# fuzz-mlir.py --write-seeds) and the corpus of earlier runs, with the
# rnn dialect's tokens as a dictionary. Exits 1 on any finding (a crash, a
# UBSan report, an out-of-memory, a timeout, an internal-error message: see
# rnn-fuzz.cpp), whose input libFuzzer writes to BUILD/fuzz-artifacts/.
#
#   tools/fuzz/run-libfuzzer.sh [SECONDS] [BUILD]   (BUILD: build-fuzz)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
build=${2:-build-fuzz}
fuzzer="$build/bin/rnn-fuzz"
[ -x "$fuzzer" ] || { echo "run-libfuzzer.sh: no $fuzzer (./dev.sh fuzz builds it)" >&2; exit 2; }

seeds="$build/fuzz-seeds"
corpus="$build/fuzz-corpus"
artifacts="$build/fuzz-artifacts"
rm -rf "$seeds"
python3 tools/fuzz/fuzz-mlir.py --write-seeds "$seeds"
mkdir -p "$corpus" "$artifacts"
# The dictionary: tools/fuzz/mlir.dict, with each cell's op and attribute
# from the cell table (python/rnnc/_cells.py).
dict="$build/fuzz-mlir.dict"
{
  cat tools/fuzz/mlir.dict
  python3 -c 'import runpy; t = runpy.run_path("python/rnnc/_cells.py")
for n in t["NAMES"]:
    print("\"rnn.%s\"\n\"#rnn.%s\"" % (n, n))'
} > "$dict"

# Undefined behaviour (UBSan) counts as a finding; a report stops the run.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
log="$build/fuzz-libfuzzer.log"
set +e
"$fuzzer" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=4096 \
  -max_len=16384 -dict="$dict" -print_final_stats=1 \
  -artifact_prefix="$artifacts/" "$corpus" "$seeds" > "$log" 2>&1
status=$?
set -e
grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+== ERROR|rnn-fuzz: |SUMMARY: )" "$log" || true
if [ $status -ne 0 ]; then
  echo "run-libfuzzer.sh: finding (exit $status); log $log, input in $artifacts/" >&2
  tail -40 "$log" >&2
  exit 1
fi
echo "run-libfuzzer.sh: ${seconds} s, no findings"
