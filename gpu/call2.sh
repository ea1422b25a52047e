#!/usr/bin/env bash
# GPU session, call 2 (under 10 minutes): the tests. From the repository
# root with the bundle carried as .gpu:
#
#   OUT=$OUT bash .gpu/call2.sh
#
# 1. The CUDA unit tests of the bundle (RNNCudaDeviceTests,
#    RNNCudaRuntimeTests, RNNRuntimeTests).
# 2. compute-sanitizer memcheck of rnn-run --target=cuda on four small
#    shapes, one of them a wavefront.
# 3. The layers as a wavefront (--wavefront) against the sequential
#    layers: the same bits, and the step times (L=2, LSTM and GRU, B=64
#    and 4096; $OUT/wave-*.json).
# 4. The kernels' tanh and exp (--gpu-math): each choice's error against
#    the float64 reference, remat bitwise, and step times.
# 5. python/tests/test_torch_cuda.py: rnnc.torch on CUDA tensors (the
#    libraries the bundle's rnn-compile links), every test.
# 6. bench/torch_cuda_replay.py: rnnc.torch's step eager, with the graph
#    replay of the library's calls, and nn.LSTM on cuDNN, at B=64.
# 7. python/tests/test_jax_cuda.py: rnnc.jax on JAX's GPU through the
#    cuda FFI handler.
# 8. The RUN lines of test/GPU/run-cuda.test through gpu/run-test-lines.py
#    (its bitwise check is ~260 runs of rnn-run), last, with the time that
#    is left: the first GPU run needed more than 5.5 minutes for it.
# Logs to $OUT/call2.log (and stdout), the pytest report to
# $OUT/pytest-cuda.txt (rnnc.jax's: $OUT/pytest-jax-cuda.txt), the
# replay benchmark to $OUT/torch-replay.txt,
# run-cuda.test's lines to $OUT/run-cuda.txt. Each
# stage has its own timeout (deadlines for a call of 585 s, scaled by
# RNNC_CALL_SECONDS: stage.sh), so that the call ends inside the 10-minute
# limit with everything it made under $OUT. The stages go from the
# cheapest checks that find the worst faults to the longest.
source "$(dirname "$0")/stage.sh"
begin_call call2

stage unit tests
for t in RNNCudaDeviceTests RNNCudaRuntimeTests RNNRuntimeTests; do
  timeout "$(left_until 90 40)" .gpu/unittests/$t --gtest_brief=1
  echo "$t rc=$?"
done

stage compute-sanitizer
D=test/Integration/data
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
if [ -z "$CS" ]; then
  echo "no compute-sanitizer on this machine"
else
  for a in "--preset=lstm --inputs=$D/lstm_l2_wide_random.in.npz" \
           "--preset=gru --inputs=$D/gru_l1_random.in.npz --remat=chunk:3" \
           "--preset=lstm --seq-len=3 --batch=3 --input-size=300 --hidden-size=300" \
           "--preset=gru --layers=3 --wavefront --gemm-rows=8 --seq-len=9 --batch=2 --input-size=5 --hidden-size=7"; do
    timeout "$(left_until 190 45)" "$CS" --tool memcheck --print-limit 5 \
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
        timeout "$(left_until 240 30)" rnn-run --target=cuda --preset=$cell \
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
    [ "$(left_until 265)" -gt 5 ] || break 2
    flags=(--preset=${data%%_*})
    timeout "$(left_until 265 20)" rnn-run --target=cuda --gpu-math=$m \
      "${flags[@]}" --inputs=$D/$data.in.npz --outputs="$OUT/math-$m.npz" \
      --iters=1 --warmup=0 > /dev/null
    echo "$m $data rc=$? worst scaled error vs float64: $(rnn-npz-compare \
      "$OUT/math-$m.npz" $D/$data.ref.npz --rtol=1e-4 | awk '
      { for (i = 1; i <= NF; i++) if ($i ~ /^max_scaled_err=/) {
          v = substr($i, 16) + 0; if (v > w) { w = v; a = $1 } } }
      END { printf "%.3e (%s)", w, a }')"
    for r in gates chunk:3; do
      timeout "$(left_until 265 20)" rnn-run --target=cuda --gpu-math=$m \
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
      [ "$(left_until 305)" -gt 5 ] || break 3
      run=math-$cell-${shape// --storage=/-}-$m
      [ -e "$OUT/$run.json" ] && run=$run-again
      timeout "$(left_until 305 20)" rnn-run --target=cuda --gpu-math=$m \
        --preset=$cell --layers=2 --seq-len=32 --batch=$shape \
        --input-size=256 --hidden-size=256 --iters=20 --warmup=5 --json \
        > "$OUT/$run.json"
      echo "$cell B=$shape $m rc=$? $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("step_ms", r["step_ms"]["median"], "fwd_ms", r["fwd_ms"], "bwd_ms", r["bwd_ms"])' "$OUT/$run.json" 2>&1 | tail -1)"
    done
  done
done

stage rnnc.torch on CUDA tensors
# The package from the source tree; the libraries rnn-compile (bundle) links.
timeout "$(left_until 440 200)" env PYTHONPATH="$PWD/python" python3 -m pytest \
  -q -rs python/tests/test_torch_cuda.py > "$OUT/pytest-cuda.txt" 2>&1
echo "test_torch_cuda rc=$?"
tail -30 "$OUT/pytest-cuda.txt"

stage "rnnc.torch graph replay"
# Eager vs replayed library calls vs cuDNN, LSTM T=32 B=64 I=H=256; exits
# non-zero if replay changes a bit of the step's results.
timeout "$(left_until 480 40)" env PYTHONPATH="$PWD/python" python3 \
  bench/torch_cuda_replay.py --B 64 --iters 20 --warmup 5 \
  > "$OUT/torch-replay.txt" 2>&1
echo "torch_cuda_replay rc=$?"
tail -8 "$OUT/torch-replay.txt"

stage "rnnc.jax on CUDA"
# rnnc.jax through the cuda FFI handler (the bundle's librnnc_jax.so) on
# JAX's GPU, against the float64 reference; skipped as a whole without
# JAX's CUDA backend.
timeout "$(left_until 520 60)" env PYTHONPATH="$PWD/python" python3 -m pytest \
  -q -rs python/tests/test_jax_cuda.py > "$OUT/pytest-jax-cuda.txt" 2>&1
echo "test_jax_cuda rc=$?"
tail -20 "$OUT/pytest-jax-cuda.txt"

stage "run-cuda.test ($(left_until 585)s)"
timeout "$(left_until 585)" python3 .gpu/run-test-lines.py -k test/GPU/run-cuda.test \
  > "$OUT/run-cuda.txt" 2>&1
echo "run-cuda.test rc=$? (124: out of time)"
tail -40 "$OUT/run-cuda.txt"
stage done
