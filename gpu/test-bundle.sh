#!/usr/bin/env bash
# Checks a folder from gpu/make-bundle.sh the way the GPU machine will use
# it, on this machine with the LLVM packages hidden from the loader:
#
#   gpu/test-bundle.sh BUNDLE_DIR
#
# * its size is under 60 MiB (a device call carries at most 64 MiB);
# * the tools, unpacked by unpack.sh, resolve no library from LLVM/MLIR
#   and none but glibc's and libgcc_s from outside the bundle (ldd), and with
#   LD_LIBRARY_PATH holding only the bundle rnn-run trains the
#   reference LSTM on the CPU to the PyTorch reference (the bundled
#   rnn-npz-compare);
# * with the null CUDA device it runs a cuda train step whose PTX it
#   compiled with the bundle's libdevice;
# * the bundle's rnn-compile, with the bundle's runtime archives, writes a
#   cuda library that passes test/GPU/Inputs/check-cuda-library.py on the
#   null device, as the PyTorch module's GPU tests will use it;
# * where the bundle carries the TorchRL wheels and unpack.sh found those
#   for this Python, TorchRL's recurrent modules import from them (with
#   PyTorch installed).
set -euo pipefail
B=$(cd "$1" && pwd)
REPO=$(cd "$(dirname "$0")/.." && pwd)
MIB=$(du -sm "$B" | cut -f1)
echo "bundle: $MIB MiB"
[ "$MIB" -lt 60 ] || { echo "FAIL: bundle is $MIB MiB (limit 60)"; exit 1; }

W=$(mktemp -d)
trap 'rm -rf "$W" /tmp/rnnc' EXIT
mkdir -p "$W/repo"
ln -s "$B" "$W/repo/.gpu"
cd "$W/repo"
unset LD_LIBRARY_PATH RNNC_CUDA_TOOLKIT
# shellcheck disable=SC1091
source .gpu/unpack.sh
for tool in rnn-run rnn-compile rnn-npz-compare; do
  if ldd "$(command -v $tool)" | grep -E 'llvm|MLIR|not found'; then
    echo "FAIL: $tool needs a library the bundle does not carry"
    exit 1
  fi
  # Every library but glibc's and GCC's runtime comes from the bundle.
  outside=$(ldd "$(command -v $tool)" |
    awk '$2 == "=>" && $3 !~ "^/tmp/rnnc/" {print $1}' |
    grep -vE '^(libc|libm|libdl|libpthread|librt|libgcc_s)\.so' || true)
  if [ -n "$outside" ]; then
    echo "FAIL: $tool loads from outside the bundle:" $outside
    exit 1
  fi
done
if [ -d /tmp/rnnc/py ] && python3 -c 'import torch' 2>/dev/null; then
  python3 -W ignore -c 'import tensordict; from torchrl.modules import LSTMModule, GRUModule' ||
    { echo "FAIL: the bundled TorchRL wheels do not import"; exit 1; }
  echo "wheels: TorchRL's LSTMModule and GRUModule import from /tmp/rnnc/py"
fi
export LD_LIBRARY_PATH=/tmp/rnnc/lib
D=$REPO/test/Integration/data
rnn-run --preset=lstm --inputs=$D/lstm_l2_wide_random.in.npz --outputs=$W/cpu.npz
rnn-npz-compare $W/cpu.npz $D/lstm_l2_wide_random.ref.npz --rtol=1e-4
if [ -f "$B/lib/libnullcuda.so" ]; then
  RNNRT_LIBCUDA=$B/lib/libnullcuda.so RNNRT_LIBCUBLAS=$B/lib/libnullcuda.so \
    rnn-run --preset=lstm --target=cuda --cuda-toolkit=$B/cuda --json \
    --seq-len=8 --batch=4 --input-size=8 --hidden-size=8 --iters=2 > $W/cuda.json
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["target"] == "cuda" and j["launches"] > 0, j; print("cuda (null device):", j["launches"], "launches,", j["gemm_calls"], "GEMM calls per step")' $W/cuda.json
  "$RNNC_COMPILE" --preset=gru --layers=2 --remat=chunk:2 --seq-len=6 \
    --batch=3 --input-size=4 --hidden-size=5 --target=cuda \
    --cuda-toolkit=$B/cuda -o $W/lib
  mkdir -p $W/libcheck
  python3 "$REPO/test/GPU/Inputs/check-cuda-library.py" \
    "$B/lib/libnullcuda.so" $W/lib $W/libcheck | tail -1
fi
echo "gpu/test-bundle.sh: ok"
