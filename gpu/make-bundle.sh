#!/usr/bin/env bash
# Packs rnnc's tools for a GPU machine that has CUDA, PyTorch, CMake and ninja
# but no LLVM/MLIR 22 and no package registry, in a folder small enough to
# carry there (under 60 MiB).
#
#   gpu/make-bundle.sh BUILD_DIR OUT_DIR
#
# BUILD_DIR is a built tree (./dev.sh build). rnn-run, rnn-compile and
# rnn-npz-compare are relinked from its objects against the static LLVM/MLIR
# archives (tools/package/link-static.sh), so that they need only glibc and
# what the folder carries (libMLIR.so and libLLVM.so together are 257 MB). rnn-run,
# rnn-compile and OpenBLAS travel compressed with Python's lzma (no xz binary
# is needed on either side); gpu/unpack.sh expands them. The runtime
# archives rnn-compile links into libraries travel too, with its link kit
# (link/, linked in process: the GPU machine needs no toolchain), for the PyTorch
# module's tests (python/tests/test_torch_cuda.py).
# The folder also holds OpenBLAS and its Fortran runtime, libdevice (in a
# toolkit layout, for --cuda-toolkit), the CUDA unit tests, the null CUDA
# device, the scripts of a GPU session (gpu/session.sh, call1.sh to
# call3.sh, stage.sh, unpack.sh) and, in
# wheels/, the wheels of TorchRL 0.14.1 and tensordict for the triton peer
# of bench/gpu_vs_cudnn.py (about 6.3 MiB, gpu/fetch-wheels.sh: pip
# download into a cache, build/gpu-wheels). Where they cannot be downloaded
# (no network, no pip) the bundle is made without them, with a warning: the
# GPU session then runs everything but that peer.
set -euo pipefail
BUILD=$(cd "$1" && pwd)
mkdir -p "$2"
OUT=$(cd "$2" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
CUDA=${CUDA_TOOLKIT_ROOT:-/usr/local/cuda}
rm -rf "$OUT"/{bin,lib,link,cuda,unittests,wheels}
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/cuda/nvvm/libdevice" "$OUT/unittests"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$HERE/../tools/package/link-static.sh" "$BUILD" "$TMP"
mv "$TMP/rnn-npz-compare" "$OUT/bin/"

cd "$BUILD"
cp runtime/librnn_library_runtime.a runtime/librnn_library_cuda_runtime.a \
  "$OUT/lib/"
cp unittests/RNNCudaDeviceTests unittests/RNNCudaRuntimeTests \
  unittests/RNNRuntimeTests "$OUT/unittests/"
[ -f lib/libnullcuda.so ] && cp lib/libnullcuda.so "$OUT/lib/"
# rnnc.jax's FFI handlers (built where the configuring Python had jaxlib).
[ -f lib/librnnc_jax.so ] && cp lib/librnnc_jax.so "$OUT/lib/"
strip "$OUT"/unittests/*
for l in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
  cp -L /lib/x86_64-linux-gnu/$l "$TMP/"
done
# libzip (npz files) and the libraries it loads, in lib/zip: the tools'
# run path and libzip's find them there, and they stay off the
# LD_LIBRARY_PATH that unpack.sh gives every process (Python's own zlib
# and OpenSSL are the machine's).
mkdir -p "$TMP/zip" "$OUT/lib/zip"
for l in libzip.so.4 libbz2.so.1.0 libcrypto.so.3 libz.so.1; do
  cp -L /lib/x86_64-linux-gnu/$l "$TMP/zip/"
done
patchelf --set-rpath '$ORIGIN' "$TMP/zip/libzip.so.4"
# rnn-compile's link kit but OpenBLAS (unpack.sh links the bundle's).
mkdir -p "$TMP/link" "$OUT/link"
for f in "$BUILD"/lib/rnnc-link/*; do
  [ "$(basename "$f")" = libopenblas.so.0 ] || cp -L "$f" "$TMP/link/"
done
# The large files travel compressed.
python3 - "$TMP" "$OUT" <<'PY'
import lzma, os, shutil, sys
tmp, out = sys.argv[1:]
kit = [(os.path.join('link', f),) * 2 for f in os.listdir(os.path.join(tmp, 'link'))]
for src, dst in [('rnn-run', 'bin/rnn-run'), ('rnn-compile', 'bin/rnn-compile'),
                 ('libopenblas.so.0', 'lib/libopenblas.so.0'),
                 ('zip/libcrypto.so.3', 'lib/zip/libcrypto.so.3')] + kit:
    with open(os.path.join(tmp, src), 'rb') as f, \
            lzma.open(os.path.join(out, dst + '.xz'), 'wb', preset=6) as o:
        shutil.copyfileobj(f, o)
PY
cp "$TMP/libgfortran.so.5" "$TMP/libquadmath.so.0" "$OUT/lib/"
cp "$TMP"/zip/{libzip.so.4,libbz2.so.1.0,libz.so.1} "$OUT/lib/zip/"
cp "$CUDA/nvvm/libdevice/libdevice.10.bc" "$OUT/cuda/nvvm/libdevice/"
cp "$HERE"/unpack.sh "$HERE"/stage.sh "$HERE"/session.sh "$HERE"/call1.sh \
  "$HERE"/call2.sh "$HERE"/call3.sh \
  "$HERE"/run-test-lines.py "$OUT/"
RNNC_WHEEL_CACHE=${RNNC_WHEEL_CACHE:-$BUILD/gpu-wheels} \
  bash "$HERE/fetch-wheels.sh" "$OUT/wheels" || rm -rf "$OUT/wheels"
echo "gpu/make-bundle.sh: $(du -sm "$OUT" | cut -f1) MiB in $OUT"
