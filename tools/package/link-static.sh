#!/usr/bin/env bash
# Relinks rnnc's tools from a built tree's objects against the static
# LLVM/MLIR/LLD archives, so that they need only glibc (2.34 or newer),
# OpenBLAS (rnn-run) and libzip (rnn-run, rnn-npz-compare): the GPU bundle
# (gpu/make-bundle.sh) and the wheel (tools/package/make-wheel.sh) carry
# them to machines without LLVM.
#
#   tools/package/link-static.sh BUILD_DIR OUT_DIR [TOOL...]
#
# TOOL is rnn-run, rnn-compile or rnn-npz-compare (default: all three),
# written stripped into OUT_DIR with a run path of $ORIGIN/../lib and
# $ORIGIN/../lib/zip. The C++ runtime, zlib and zstd are linked statically;
# libzip, which reads and writes npz files (rnn-run, rnn-npz-compare), is a
# shared library (Debian has no static one), which the GPU bundle carries
# in lib/zip with the libraries it loads.
set -euo pipefail
BUILD=$(cd "$1" && pwd)
mkdir -p "$2"
OUT=$(cd "$2" && pwd)
shift 2
TOOLS=("$@")
[ ${#TOOLS[@]} -gt 0 ] || TOOLS=(rnn-run rnn-compile rnn-npz-compare)
LL=/usr/lib/llvm-22/lib
MULTIARCH=/usr/lib/x86_64-linux-gnu

# Every MLIR/LLVM archive but those of tools rnnc does not contain; the
# linker takes only what is referenced.
MLIR_LIBS=$(ls $LL/libMLIR*.a | grep -v 'CAPI\|Python\|Tblgen\|TableGen\|Lsp\|Reduce\|Query\|OptMain\|TestTransform')
# Code generators for the host (X86) and NVPTX only: LLD's LTO set-up
# initializes every target LLVM has, and those initializers are stubbed
# (the tools never generate code for other targets).
OTHER_TARGETS=$(/usr/lib/llvm-22/bin/llvm-config --targets-built | tr ' ' '\n' |
  grep -vx 'X86\|NVPTX' | paste -sd'|')
LLVM_LIBS=$(ls $LL/libLLVM*.a | grep -v 'TableGen\|FuzzMutate\|Exegesis\|CFIVerify\|DWARFLinker' |
  grep -Ev "/libLLVM($OTHER_TARGETS)[A-Z]")
SYSTEM_LIBS=("$MULTIARCH/libz.a" "$MULTIARCH/libzstd.a" -ldl -lpthread -lrt -lm
             -static-libstdc++ -static-libgcc)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Stand-ins, in one object: arc4random (LLVM's Support library calls it;
# glibc has it since 2.36), so that the tools load on glibc 2.34/2.35
# (Ubuntu 22.04) as well; Debian's Polly plugin, which LLD's LTO backend
# registers (never run: rnn-compile links native objects) and which has no
# static archive; the other targets' initializers.
{
  cat <<'CPP'
#include "llvm/Plugins/PassPlugin.h"
#include <stdint.h>
#include <sys/random.h>
extern "C" uint32_t arc4random(void) {
  uint32_t value = 0;
  while (getrandom(&value, sizeof value, 0) != sizeof value) {
  }
  return value;
}
llvm::PassPluginLibraryInfo getPollyPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "Polly", "none", [](llvm::PassBuilder &) {}};
}
CPP
  for t in ${OTHER_TARGETS//|/ }; do
    for part in TargetInfo Target TargetMC AsmParser AsmPrinter Disassembler \
                TargetMCA; do
      echo "extern \"C\" void LLVMInitialize$t$part() {}"
    done
  done
} > "$TMP/standins.cpp"
c++ -O2 -fPIC -std=c++17 -I/usr/lib/llvm-22/include -c "$TMP/standins.cpp" \
  -o "$TMP/standins.o"

cd "$BUILD"
RNN_LIBS=(lib/libRNNDriver.a lib/libRNNPipelines.a lib/Support/libRNNSupport.a
          lib/libRNNTarget.a lib/libRNNConversion.a lib/libRNNTransforms.a lib/libRNNAnalysis.a
          lib/libRNNDialect.a)
link() {
  local out=$1
  shift
  c++ -O3 -fuse-ld=gold -Wl,--gc-sections \
    -Wl,-rpath,'$ORIGIN/../lib:$ORIGIN/../lib/zip' \
    "$TMP/standins.o" -o "$OUT/$out" "$@"
  strip "$OUT/$out"
}
for tool in "${TOOLS[@]}"; do
  case $tool in
    rnn-run)
      link rnn-run \
        tools/rnn-run/CMakeFiles/rnn-run.dir/{rnn-run,RunSession,Jit,HostRunTarget,CudaRunTarget}.cpp.o \
        "${RNN_LIBS[0]}" "${RNN_LIBS[1]}" "${RNN_LIBS[2]}" \
        runtime/librnn_cuda_runtime.a runtime/librnn_runtime.a \
        "${RNN_LIBS[@]:3}" \
        -Wl,--start-group $MLIR_LIBS $LLVM_LIBS -Wl,--end-group \
        -lopenblas -lzip "${SYSTEM_LIBS[@]}" ;;
    rnn-compile)
      link rnn-compile \
        tools/rnn-compile/CMakeFiles/rnn-compile.dir/{rnn-compile,Link,Manifest}.cpp.o \
        "${RNN_LIBS[@]}" \
        $LL/liblldELF.a $LL/liblldCommon.a \
        -Wl,--start-group $MLIR_LIBS $LLVM_LIBS -Wl,--end-group \
        "${SYSTEM_LIBS[@]}" ;;
    rnn-npz-compare)
      link rnn-npz-compare \
        tools/rnn-npz-compare/CMakeFiles/rnn-npz-compare.dir/*.o \
        lib/Support/libRNNSupport.a \
        -Wl,--start-group $LLVM_LIBS -Wl,--end-group -lzip "${SYSTEM_LIBS[@]}" ;;
    *)
      echo "link-static.sh: unknown tool $tool" >&2
      exit 2 ;;
  esac
done
