#!/usr/bin/env bash
# GPU session, call 2 (under 10 minutes): the tests. From the repository
# root with the bundle carried as .gpu:
#
#   OUT=$OUT bash .gpu/call2.sh     (a GPU session: gpu/session.sh)
#
# The stages go from what no GPU has run yet, and the cheapest checks
# that find the worst faults, to the longest: the second call of a
# 15-minute window has about 250 s (gpu/session.sh), and runs the first
# four.
# 1. The CUDA unit tests of the bundle (RNNCudaDeviceTests,
#    RNNCudaRuntimeTests, RNNRuntimeTests).
# 2. python/tests/test_jax_cuda.py: rnnc.jax on JAX's GPU through the
#    cuda FFI handler.
# 3. python/tests/test_torch_cuda.py: rnnc.torch on CUDA tensors (the
#    libraries the bundle's rnn-compile links), every test, eight at a
#    time (pytest-xdist, where the machine has it).
# 4. rnn-run --dynamic against the program compiled for each shape
#    (test/Integration/Inputs/check-dynamic.py --target=cuda, half of its
#    cases; $OUT/dynamic-cuda.txt).
# 5. compute-sanitizer memcheck of rnn-run --target=cuda on four small
#    shapes, one of them a wavefront.
# 6. The layers as a wavefront (--wavefront) against the sequential
#    layers: the same bits, and the step times (L=2, LSTM and GRU, B=64
#    and 4096; $OUT/wave-*.json).
# 7. bench/torch_cuda_replay.py: rnnc.torch's step eager, with the graph
#    replay of the library's calls, and nn.LSTM on cuDNN, at B=64.
# 8. The kernels' tanh and exp (--gpu-math): each choice's error against
#    the float64 reference, remat bitwise, and step times.
# 9. The RUN lines of test/GPU/run-cuda.test through gpu/run-test-lines.py
#    (its bitwise check is ~260 runs of rnn-run), last, with the time that
#    is left: the first GPU run needed more than 5.5 minutes for it.
# Logs to $OUT/call2.log (and stdout), the pytest reports to
# $OUT/pytest-jax-cuda.txt and $OUT/pytest-cuda.txt, the replay benchmark
# to $OUT/torch-replay.txt, run-cuda.test's lines to $OUT/run-cuda.txt.
# Each stage has its own deadline (stage.sh: seconds into a call of 585 s,
# cut to RNNC_CALL_SECONDS), so that the call ends inside its time with
# everything it made under $OUT.
source "$(dirname "$0")/stage.sh"
begin_call call2
D=test/Integration/data
# pytest-xdist (the GPU machine has it): the tests' compiles side by side.
XDIST=()
python3 -c "import xdist" 2>/dev/null && XDIST=(-n 8 --dist worksteal)

stage unit tests
for t in RNNCudaDeviceTests RNNCudaRuntimeTests RNNRuntimeTests; do
  timeout "$(left_until 40 30)" .gpu/unittests/$t --gtest_brief=1
  echo "$t rc=$?"
done

stage "rnnc.jax on CUDA"
# rnnc.jax through the cuda FFI handler (the bundle's librnnc_jax.so) on
# JAX's GPU, against the float64 reference; skipped as a whole without
# JAX's CUDA backend. In one process (about 50 s on two CPU cores with
# the CUDA tests run on the CPU).
timeout "$(left_until 110)" env PYTHONPATH="$PWD/python" python3 -m pytest \
  -q -rs python/tests/test_jax_cuda.py > "$OUT/pytest-jax-cuda.txt" 2>&1
echo "test_jax_cuda rc=$?"
tail -20 "$OUT/pytest-jax-cuda.txt"

stage rnnc.torch on CUDA tensors
# The package from the source tree; the libraries rnn-compile (bundle) links.
timeout "$(left_until 200)" env PYTHONPATH="$PWD/python" python3 -m pytest \
  "${XDIST[@]}" -q -rs python/tests/test_torch_cuda.py > "$OUT/pytest-cuda.txt" 2>&1
echo "test_torch_cuda rc=$?"
tail -30 "$OUT/pytest-cuda.txt"

stage "one program for every T and B against each shape's (--dynamic)"
# rnn-run --dynamic on the GPU at eight shapes (T=1, B=1, a tail GEMM
# block, T*B large; every cell, remat policies, dropout, reset states,
# bf16 storage), half of the cases of test/Integration/dynamic.test: the
# outputs and gradients of the program compiled for each shape bitwise,
# the same GEMM calls, the predicted peak measured.
mkdir -p /tmp/rnnc-dynamic
timeout "$(left_until 250)" python3 test/Integration/Inputs/check-dynamic.py \
  /tmp/rnnc-dynamic --jobs=8 --shard=0/2 --target=cuda > "$OUT/dynamic-cuda.txt" 2>&1
echo "check-dynamic rc=$?"
echo "cases that passed: $(grep -c " peak " "$OUT/dynamic-cuda.txt")"
grep "^FAIL" "$OUT/dynamic-cuda.txt" | head -20

stage compute-sanitizer
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -z "$CS" ]; then
  echo "no compute-sanitizer on this machine"
else
  for a in "--preset=lstm --inputs=$D/lstm_l2_wide_random.in.npz" \
           "--preset=gru --inputs=$D/gru_l1_random.in.npz --remat=chunk:3" \
           "--preset=lstm --seq-len=3 --batch=3 --input-size=300 --hidden-size=300" \
           "--preset=gru --layers=3 --wavefront --gemm-rows=8 --seq-len=9 --batch=2 --input-size=5 --hidden-size=7"; do
    timeout "$(left_until 280 30)" "$CS" --tool memcheck --print-limit 5 \
      --error-exitcode 9 rnn-run --target=cuda --no-cuda-graph $a --iters=1 \
      --warmup=0 2>&1 | tail -4
    echo "memcheck rc=${PIPESTATUS[0]}"
  done
fi

stage "wavefront (L=2): bits and step time"
# The layers as a wavefront (--wavefront: each layer on a stream of its
# own, block by block) against the same step with the layers one after
# another, at the same GEMM blocks: the same bits, and the step times side
# by side. At blocks of 8 steps (rows8) and at rnn-run's default blocks
# (the choice a default wavefront would run with). LSTM and GRU, T=32,
# I=H=256, B=64 and 4096.
for cell in lstm gru; do
  for B in 64 4096; do
    for rows in rows8 default; do
      for w in seq wave; do
        flags=()
        [ "$w" = wave ] && flags+=(--wavefront)
        [ "$rows" = rows8 ] && flags+=(--gemm-rows=$((B * 8)))
        run=wave-$cell-$B-$rows-$w
        timeout "$(left_until 320 30)" rnn-run --target=cuda --preset=$cell \
          --layers=2 --seq-len=32 --batch=$B --input-size=256 \
          --hidden-size=256 "${flags[@]}" --iters=20 --warmup=5 --json \
          --outputs="$OUT/$run.npz" > "$OUT/$run.json"
        echo "$cell B=$B $rows $w rc=$? $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("step_ms", r["step_ms"]["median"], "peak", r["peak_bytes"]["measured"], "launches", r["launches"])' "$OUT/$run.json" 2>&1 | tail -1)"
      done
      rnn-npz-compare --quiet "$OUT/wave-$cell-$B-$rows-wave.npz" \
        "$OUT/wave-$cell-$B-$rows-seq.npz" --rtol=0
      echo "$cell B=$B $rows bitwise rc=$?"
    done
  done
done

stage "rnnc.torch graph replay"
# Eager vs replayed library calls vs cuDNN, LSTM T=32 B=64 I=H=256; exits
# non-zero if replay changes a bit of the step's results.
timeout "$(left_until 340 30)" env PYTHONPATH="$PWD/python" python3 \
  bench/torch_cuda_replay.py --B 64 --iters 20 --warmup 5 \
  > "$OUT/torch-replay.txt" 2>&1
echo "torch_cuda_replay rc=$?"
tail -8 "$OUT/torch-replay.txt"

stage "gpu-math: error and step time"
# How the kernels compute tanh and exp (--gpu-math: polynomial, the
# default; ex2, the hardware's ex2.approx; approx, ex2.approx and
# tanh.approx.f32). Per choice: the largest scaled error of the outputs and
# gradients against the float64 reference (the GPU tests' tolerance is
# 1e-4), every remat policy bitwise equal to none, and the step time (L=2,
# T=32, I=H=256, B=64 and 4096, and bf16 storage at 4096, where the GEMMs
# take least of the step; $OUT/math-*.json), the polynomials timed twice.
for m in polynomial ex2 approx; do
  for data in lstm_l2_wide_random gru_l2_wide_random; do
    [ "$(left_until 380)" -gt 5 ] || break 2
    flags=(--preset=${data%%_*})
    timeout "$(left_until 380 20)" rnn-run --target=cuda --gpu-math=$m \
      "${flags[@]}" --inputs=$D/$data.in.npz --outputs="$OUT/math-$m.npz" \
      --iters=1 --warmup=0 > /dev/null
    echo "$m $data rc=$? worst scaled error vs float64: $(rnn-npz-compare \
      "$OUT/math-$m.npz" $D/$data.ref.npz --rtol=1e-4 | awk '
      { for (i = 1; i <= NF; i++) if ($i ~ /^max_scaled_err=/) {
          v = substr($i, 16) + 0; if (v > w) { w = v; a = $1 } } }
      END { printf "%.3e (%s)", w, a }')"
    for r in gates chunk:3; do
      timeout "$(left_until 380 20)" rnn-run --target=cuda --gpu-math=$m \
        "${flags[@]}" --remat=$r --inputs=$D/$data.in.npz \
        --outputs="$OUT/math-$m-remat.npz" --iters=1 --warmup=0 > /dev/null
      rnn-npz-compare --quiet "$OUT/math-$m-remat.npz" "$OUT/math-$m.npz" \
        --rtol=0 > /dev/null
      echo "$m $data remat=$r bitwise to none rc=$?"
    done
  done
done
for cell in lstm gru; do
  for shape in "64" "4096" "4096 --storage=bf16"; do
    # polynomial again last: the spread between its two runs is the noise.
    for m in polynomial ex2 approx polynomial; do
      [ "$(left_until 440)" -gt 5 ] || break 3
      run=math-$cell-${shape// --storage=/-}-$m
      [ -e "$OUT/$run.json" ] && run=$run-again
      timeout "$(left_until 440 20)" rnn-run --target=cuda --gpu-math=$m \
        --preset=$cell --layers=2 --seq-len=32 --batch=$shape \
        --input-size=256 --hidden-size=256 --iters=20 --warmup=5 --json \
        > "$OUT/$run.json"
      echo "$cell B=$shape $m rc=$? $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("step_ms", r["step_ms"]["median"], "fwd_ms", r["fwd_ms"], "bwd_ms", r["bwd_ms"])' "$OUT/$run.json" 2>&1 | tail -1)"
    done
  done
done

stage run-cuda.test
timeout "$(left_until 585)" python3 .gpu/run-test-lines.py -k test/GPU/run-cuda.test \
  > "$OUT/run-cuda.txt" 2>&1
echo "run-cuda.test rc=$? (124: out of time)"
tail -40 "$OUT/run-cuda.txt"
stage done
