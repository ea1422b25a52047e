#!/usr/bin/env bash
# Packs rnnc's tools for a GPU machine that has CUDA, PyTorch, CMake and ninja
# but no LLVM/MLIR 22 and no package registry, in a folder small enough to
# carry there (under 60 MiB).
#
#   gpu/make-bundle.sh BUILD_DIR OUT_DIR
#
# BUILD_DIR is a built tree (./dev.sh build). rnn-run, rnn-compile and
# rnn-npz-compare are relinked from its objects against the static LLVM/MLIR
# archives, so that they need only glibc, libstdc++ and what the folder
# carries (libMLIR.so and libLLVM.so together are 257 MB). rnn-run,
# rnn-compile and OpenBLAS travel compressed with Python's lzma (no xz binary
# is needed on either side); gpu/unpack.sh expands them. The runtime
# archives rnn-compile links into libraries travel too, with its link kit
# (link/, linked in process: the GPU machine needs no toolchain), for the PyTorch
# module's tests (python/tests/test_torch_cuda.py).
# The folder also holds OpenBLAS and its Fortran runtime, libdevice (in a
# toolkit layout, for --cuda-toolkit), the CUDA unit tests, the null CUDA
# device, the scripts of a GPU session (gpu/call1.sh, gpu/call2.sh) and, in
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
LL=/usr/lib/llvm-22/lib
CUDA=${CUDA_TOOLKIT_ROOT:-/usr/local/cuda}
rm -rf "$OUT"/{bin,lib,link,cuda,unittests,wheels}
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/cuda/nvvm/libdevice" "$OUT/unittests"

# Every MLIR/LLVM archive but those of tools rnn-run does not contain; the
# linker takes only what is referenced.
MLIR_LIBS=$(ls $LL/libMLIR*.a | grep -v 'CAPI\|Python\|Tblgen\|TableGen\|Lsp\|Reduce\|Query\|OptMain\|TestTransform')
# Code generators for the host (X86) and NVPTX only: LLD's LTO set-up
# initializes every target LLVM has, and those initializers are stubbed
# (the tools never generate code for other targets).
OTHER_TARGETS=$(/usr/lib/llvm-22/bin/llvm-config --targets-built | tr ' ' '\n' |
  grep -vx 'X86\|NVPTX' | paste -sd'|')
LLVM_LIBS=$(ls $LL/libLLVM*.a | grep -v 'TableGen\|FuzzMutate\|Exegesis\|CFIVerify\|DWARFLinker' |
  grep -Ev "/libLLVM($OTHER_TARGETS)[A-Z]")
ZSTD=$(ls /lib/x86_64-linux-gnu/libzstd.so.1)
# LLVM's Support library calls arc4random (glibc 2.36+); a local definition
# keeps the binaries loadable on glibc 2.34/2.35 (Ubuntu 22.04) as well.
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
printf '#include <stdint.h>\n#include <sys/random.h>\nuint32_t arc4random(void){uint32_t v=0;while(getrandom(&v,sizeof v,0)!=sizeof v){}return v;}\n' |
  cc -O2 -fPIC -x c -c - -o "$TMP/arc4random.o"

# LLD's LTO backend (linked into rnn-compile, never run: the libraries it
# links are native objects) registers Debian's Polly plugin, which has no
# static archive: an empty plugin stands in, with the other targets'
# initializers.
cat > "$TMP/polly.cpp" <<'CPP'
#include "llvm/Plugins/PassPlugin.h"
llvm::PassPluginLibraryInfo getPollyPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "Polly", "none", [](llvm::PassBuilder &) {}};
}
CPP
for t in ${OTHER_TARGETS//|/ }; do
  for part in TargetInfo Target TargetMC AsmParser AsmPrinter Disassembler \
              TargetMCA; do
    echo "extern \"C\" void LLVMInitialize$t$part() {}"
  done
done >> "$TMP/polly.cpp"
c++ -O2 -fPIC -std=c++17 -I/usr/lib/llvm-22/include -c "$TMP/polly.cpp" \
  -o "$TMP/polly.o"

cd "$BUILD"
c++ -O3 -fuse-ld=gold -Wl,--gc-sections -Wl,-rpath,'$ORIGIN/../lib' \
  tools/rnn-run/CMakeFiles/rnn-run.dir/{rnn-run,Jit}.cpp.o "$TMP/arc4random.o" "$TMP/polly.o" \
  -o "$TMP/rnn-run" \
  tools/rnn-run/libRNNToolModel.a \
  lib/libRNNPipelines.a lib/Support/libRNNSupport.a runtime/librnn_cuda_runtime.a \
  runtime/librnn_runtime.a lib/libRNNConversion.a lib/libRNNTransforms.a \
  lib/libRNNAnalysis.a lib/libRNNDialect.a \
  -Wl,--start-group $MLIR_LIBS $LLVM_LIBS -Wl,--end-group \
  -lz "$ZSTD" -lopenblas -ldl -lpthread -lrt -lm
c++ -O3 -fuse-ld=gold -Wl,--gc-sections -Wl,-rpath,'$ORIGIN/../lib' \
  tools/rnn-compile/CMakeFiles/rnn-compile.dir/rnn-compile.cpp.o \
  "$TMP/arc4random.o" "$TMP/polly.o" -o "$TMP/rnn-compile" \
  tools/rnn-run/libRNNToolModel.a \
  lib/libRNNPipelines.a lib/Support/libRNNSupport.a \
  lib/libRNNConversion.a lib/libRNNTransforms.a \
  lib/libRNNAnalysis.a lib/libRNNDialect.a $LL/liblldELF.a $LL/liblldCommon.a \
  -Wl,--start-group $MLIR_LIBS $LLVM_LIBS -Wl,--end-group \
  -lz "$ZSTD" -ldl -lpthread -lrt -lm
cp runtime/librnn_library_runtime.a runtime/librnn_library_cuda_runtime.a \
  "$OUT/lib/"
c++ -O3 -fuse-ld=gold -Wl,--gc-sections -Wl,-rpath,'$ORIGIN/../lib' \
  tools/rnn-npz-compare/CMakeFiles/rnn-npz-compare.dir/*.o "$TMP/arc4random.o" \
  -o "$OUT/bin/rnn-npz-compare" lib/Support/libRNNSupport.a \
  -Wl,--start-group $LLVM_LIBS -Wl,--end-group -lz "$ZSTD" -ldl -lpthread
cp unittests/RNNCudaDeviceTests unittests/RNNCudaRuntimeTests \
  unittests/RNNRuntimeTests "$OUT/unittests/"
[ -f lib/libnullcuda.so ] && cp lib/libnullcuda.so "$OUT/lib/"
strip "$TMP/rnn-run" "$TMP/rnn-compile" "$OUT/bin/rnn-npz-compare" \
  "$OUT"/unittests/*
for l in libopenblas.so.0 libgfortran.so.5 libquadmath.so.0; do
  cp -L /lib/x86_64-linux-gnu/$l "$TMP/"
done
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
                 ('libopenblas.so.0', 'lib/libopenblas.so.0')] + kit:
    with open(os.path.join(tmp, src), 'rb') as f, \
            lzma.open(os.path.join(out, dst + '.xz'), 'wb', preset=6) as o:
        shutil.copyfileobj(f, o)
PY
cp "$TMP/libgfortran.so.5" "$TMP/libquadmath.so.0" "$OUT/lib/"
cp "$CUDA/nvvm/libdevice/libdevice.10.bc" "$OUT/cuda/nvvm/libdevice/"
cp "$HERE"/unpack.sh "$HERE"/stage.sh "$HERE"/call1.sh "$HERE"/call2.sh \
  "$HERE"/run-test-lines.py "$OUT/"
RNNC_WHEEL_CACHE=${RNNC_WHEEL_CACHE:-$BUILD/gpu-wheels} \
  bash "$HERE/fetch-wheels.sh" "$OUT/wheels" || rm -rf "$OUT/wheels"
echo "gpu/make-bundle.sh: $(du -sm "$OUT" | cut -f1) MiB in $OUT"
