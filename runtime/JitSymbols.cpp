//===- JitSymbols.cpp - The host runtime's symbols for the JIT ------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: jitSymbols(), the C entry points of the host runtime by name.
//
// Why: in a file of its own, so that a program linking the runtime archive
// pulls in the BLAS (and its OpenBLAS dependency) only if its code calls
// rnnrt_sgemm: a library compiled for the cuda target does not.
//
//===----------------------------------------------------------------------===//

#include "rnn/Runtime/Runtime.h"

std::vector<std::pair<const char *, void *>> rnn::runtime::jitSymbols() {
  return {
      {"_mlir_memref_to_llvm_alloc",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_alloc)},
      {"_mlir_memref_to_llvm_aligned_alloc",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_aligned_alloc)},
      {"_mlir_memref_to_llvm_free",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_free)},
      {"rnnrt_begin_phase", reinterpret_cast<void *>(&rnnrt_begin_phase)},
      {"_mlir_ciface_rnnrt_sgemm",
       reinterpret_cast<void *>(&_mlir_ciface_rnnrt_sgemm)},
      {"_mlir_ciface_rnnrt_dgemm",
       reinterpret_cast<void *>(&_mlir_ciface_rnnrt_dgemm)},
  };
}
