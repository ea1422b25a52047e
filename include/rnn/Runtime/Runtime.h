//===- Runtime.h - Host runtime for JIT-compiled rnnc programs --*- C++ -*-===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: the small host runtime library that programs compiled by rnnc call
// into at run time, plus the C++ API the host tool uses to drive and observe
// them. It provides three things:
//
//   * An accounting allocator. Every buffer a compiled program allocates goes
//     through the `_mlir_memref_to_llvm_*` entry points (the MLIR memref
//     lowering with use-generic-functions=true), which record the exact
//     number of bytes requested, the peak, the live count and bad frees in
//     the host ledger. The CUDA runtime (Cuda.h) records device buffers in a
//     second ledger of the same kind (Accounting.h).
//   * Steps and phases. A step is one invocation of a compiled function;
//     compiled code marks the forward->backward boundary with
//     `rnnrt_begin_phase(1)` so that time and memory, host and device, can
//     be reported per phase.
//   * GEMM entry points (`rnnrt_sgemm`, `rnnrt_dgemm`, called through their
//     llvm.emit_c_interface wrapper) that forward to OpenBLAS cblas_sgemm
//     and cblas_dgemm.
//
// Why: memory use and time per training step are the quantities rnnc is
// measured by, so they are measured here, at the single point every
// allocation and every step passes through. The library links no MLIR
// library; it only uses the header-only memref descriptor layout.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_RUNTIME_RUNTIME_H
#define RNN_RUNTIME_RUNTIME_H

#include "rnn/Runtime/Accounting.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

//===----------------------------------------------------------------------===//
// C entry points called from JIT-compiled code.
//===----------------------------------------------------------------------===//

extern "C" {
/// Allocates `size` bytes, 64-byte aligned, and accounts exactly `size` bytes.
/// Never returns null for a successful request (also not for size 0).
void *_mlir_memref_to_llvm_alloc(size_t size);

/// Allocates `size` bytes aligned to max(64, `alignment`) (rounded up to a
/// power of two) and accounts exactly `size` bytes.
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);

/// Frees a pointer returned by one of the allocation entry points. Null is a
/// no-op; a pointer the runtime does not know is counted as a bad free and
/// otherwise ignored.
void _mlir_memref_to_llvm_free(void *ptr);

/// Marks the start of `phase` within the current step (1 = backward). Only
/// the first transition to a phase >= 1 in a step is recorded; calls outside
/// a step, and calls with phase 0, are ignored.
void rnnrt_begin_phase(int64_t phase);

/// C = alpha * op(A) * op(B) + beta * C, where op(X) is X or X^T according to
/// `transA` / `transB` (non-zero means transposed). Sizes are those of the
/// stored matrices: A is [M,K] (or [K,M] if transA), B is [K,N] (or [N,K] if
/// transB), C is [M,N]. Any strides are accepted. Inconsistent shapes are an
/// internal error: one line is printed to stderr and the process aborts.
void _mlir_ciface_rnnrt_sgemm(int64_t transA, int64_t transB, float alpha,
                              float beta, StridedMemRefType<float, 2> *A,
                              StridedMemRefType<float, 2> *B,
                              StridedMemRefType<float, 2> *C);

/// The same in double precision (f64 models on the CPU).
void _mlir_ciface_rnnrt_dgemm(int64_t transA, int64_t transB, double alpha,
                              double beta, StridedMemRefType<double, 2> *A,
                              StridedMemRefType<double, 2> *B,
                              StridedMemRefType<double, 2> *C);
} // extern "C"

namespace rnn {
namespace runtime {

//===----------------------------------------------------------------------===//
// Accounting allocator.
//===----------------------------------------------------------------------===//

/// The ledger of host memory, behind allocate() and the figures below.
MemoryAccounting &hostMemory();

/// The ledger of device memory, filled by the CUDA runtime (Cuda.h). It
/// lives here so that steps and phases cover both memory spaces.
MemoryAccounting &deviceMemory();

/// Allocates `bytes` bytes (64-byte aligned) through the accounting allocator.
void *allocate(size_t bytes);

/// Allocates `bytes` bytes aligned to max(64, `alignment`) through the
/// accounting allocator.
void *allocateAligned(size_t alignment, size_t bytes);

/// Frees memory from allocate()/allocateAligned(). Null is a no-op; unknown
/// pointers are counted in badFrees() and not freed.
void deallocate(void *p);

/// Bytes currently allocated (sum of the sizes requested, not rounded).
size_t currentBytes();

/// Highest currentBytes() since the last beginStep() or resetCounters() (or
/// since start-up).
size_t peakBytes();

/// Number of allocations not yet freed.
size_t liveAllocations();

/// Number of successful allocations since start-up or resetCounters().
size_t totalAllocations();

/// Number of frees of pointers the allocator did not know (double frees,
/// foreign pointers) since start-up or resetCounters().
size_t badFrees();

/// Resets peakBytes() to currentBytes() and zeroes totalAllocations() and
/// badFrees(). Live allocations are unaffected.
void resetCounters();

/// Number of GEMMs compiled code has called (rnnrt_sgemm and
/// rnnrt_cuda_sgemm) since start-up.
size_t gemmCalls();
/// Counts one GEMM call; called by the GEMM entry points.
void countGemmCall();

/// Number of GPU kernel launches compiled code has issued since start-up
/// (zero on the CPU target).
size_t kernelLaunches();
/// Counts one kernel launch; called by mgpuLaunchKernel.
void countKernelLaunch();

/// Number of times the host has waited for the GPU since start-up (stream
/// and event synchronizations, by compiled code or the runtime's helpers).
size_t synchronizations();
/// Counts one synchronization.
void countSynchronization();

//===----------------------------------------------------------------------===//
// Steps and phases.
//===----------------------------------------------------------------------===//

/// Time and memory figures of one step. Times are in milliseconds. The
/// MemoryFigures base holds the host figures; `device` those of device
/// memory over the same step.
struct StepStats : MemoryFigures {
  double totalMs = 0.0;
  /// Time from beginStep() to the backward marker (or to endStep() if the
  /// step had no backward marker).
  double fwdMs = 0.0;
  /// Time from the backward marker to endStep(); 0 without a marker.
  double bwdMs = 0.0;
  /// Whether rnnrt_begin_phase(1) was called during the step.
  bool sawBackward = false;
  /// Device memory figures (all zero when nothing used the device).
  MemoryFigures device;
};

/// Starts a step: the host and device peaks are reset to their current
/// bytes, the phase to 0 (forward), and a steady_clock timer is started. A
/// step already in progress is discarded. The timer measures host time; for
/// asynchronous device work the caller synchronizes before endStep() or
/// times with device events (Cuda.h).
void beginStep();

/// Ends the step begun by beginStep() and returns its figures. Without a
/// step in progress, returns default StepStats with only the bytesAtEnd
/// figures (host and device) set.
StepStats endStep();

/// Whether a step is in progress.
bool inStep();

//===----------------------------------------------------------------------===//
// BLAS.
//===----------------------------------------------------------------------===//

/// Sets the number of threads OpenBLAS uses (n >= 1).
void setBlasThreads(int n);

/// Describes the GEMM backend, e.g. "openblas cblas_sgemm, 1 thread (OpenBLAS
/// 0.3.26 ..., core Haswell)" (cblas_dgemm for `f64` code).
std::string gemmBackend(bool f64 = false);

//===----------------------------------------------------------------------===//
// JIT registration.
//===----------------------------------------------------------------------===//

/// The C entry points above as (symbol name, address) pairs, for registering
/// with the JIT. Names are exactly the C names (no platform mangling).
std::vector<std::pair<const char *, void *>> jitSymbols();

} // namespace runtime
} // namespace rnn

#endif // RNN_RUNTIME_RUNTIME_H
