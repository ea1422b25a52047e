//===- Gemm.cpp - GEMMs on OpenBLAS and cuBLAS's entry points -------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//

#include "NullCuda.h"

namespace nullcuda {

//===----------------------------------------------------------------------===//
// SGEMM.
//===----------------------------------------------------------------------===//


/// Checks that each operand lies wholly in one live device allocation.
cublasStatus_t checkGemmOperands(const std::string &entry, const GemmCall &g) {
  for (const GemmOperand &operand : gemmOperands(g)) {
    if (operand.bytes == 0)
      continue;
    auto p = reinterpret_cast<uintptr_t>(operand.p);
    const AllocationMap::value_type *allocation = findAllocation(p);
    std::string where =
        entry + ": " + operand.name + " (m=" + std::to_string(g.m) +
        " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) +
        ", lda=" + std::to_string(g.lda) + " ldb=" + std::to_string(g.ldb) +
        " ldc=" + std::to_string(g.ldc) + ")";
    if (!allocation)
      return blasViolation(CUBLAS_STATUS_INVALID_VALUE,
                           where + " at " + hex(p) +
                               " is not in a live device allocation");
    if (!contains(*allocation, p, operand.bytes))
      return blasViolation(CUBLAS_STATUS_INVALID_VALUE,
                           where + ": bytes [" + hex(p) + ", +" +
                               std::to_string(operand.bytes) + ") overrun " +
                               describe(*allocation));
    if (!allocation->second.managed &&
        allocation->second.context != g.handle->context)
      return blasViolation(
          CUBLAS_STATUS_INVALID_VALUE,
          where + ": " + describe(*allocation) + " is memory of " +
              deviceName(allocation->second.context) + ", the handle's is " +
              deviceName(g.handle->context));
  }
  // cuBLAS's default workspace pool may allocate inside a capture and is
  // shared by every stream of the handle: a caller must set its own (or
  // none, size 0) after each cublasSetStream, which drops it.
  if (!g.workspaceSet)
    return blasViolation(CUBLAS_STATUS_INVALID_VALUE,
                         entry + ": no workspace on stream " +
                             hex(g.handle->stream) +
                             " (cublasSetStream resets it to the default "
                             "pool; call cublasSetWorkspace after it)");
  if (g.workspace && !findAllocation(g.workspace))
    return blasViolation(CUBLAS_STATUS_INVALID_VALUE,
                         entry + ": the handle's workspace " +
                             hex(g.workspace) + " was freed");
  return CUBLAS_STATUS_SUCCESS;
}

void runGemm(const GemmCall &g) {
  if (g.m == 0 || g.n == 0)
    return;
  if (g.k == 0) {
    // C = beta * C; with beta = 0, C is not read (it may hold NaNs).
    for (int j = 0; j < g.n; ++j)
      for (int i = 0; i < g.m; ++i) {
        float &c = g.c[static_cast<size_t>(j) * g.ldc + i];
        c = g.beta == 0.0f ? 0.0f : g.beta * c;
      }
    return;
  }
  auto op = [](cublasOperation_t o) {
    return o == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
  };
  if (!g.bf16) {
    cblas_sgemm(CblasColMajor, op(g.transa), op(g.transb), g.m, g.n, g.k,
                g.alpha, static_cast<const float *>(g.a), g.lda,
                static_cast<const float *>(g.b), g.ldb, g.beta, g.c, g.ldc);
    return;
  }
  // bf16 operands widened to f32 (exact), then the f32 GEMM: the products
  // are exact and the sums f32, as on the tensor cores.
  ++state().count.bf16Gemms;
  auto widen = [](const void *p, int64_t rows, int64_t cols, int64_t ld) {
    auto *bits = static_cast<const uint16_t *>(p);
    std::vector<float> out(static_cast<size_t>(cols * ld));
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < rows; ++i) {
        uint32_t wide = static_cast<uint32_t>(bits[j * ld + i]) << 16;
        std::memcpy(&out[j * ld + i], &wide, sizeof(wide));
      }
    return out;
  };
  bool ta = g.transa != CUBLAS_OP_N, tb = g.transb != CUBLAS_OP_N;
  std::vector<float> a = widen(g.a, ta ? g.k : g.m, ta ? g.m : g.k, g.lda);
  std::vector<float> b = widen(g.b, tb ? g.n : g.k, tb ? g.k : g.n, g.ldb);
  cblas_sgemm(CblasColMajor, op(g.transa), op(g.transb), g.m, g.n, g.k, g.alpha,
              a.data(), g.lda, b.data(), g.ldb, g.beta, g.c, g.ldc);
}

} // namespace nullcuda

using namespace nullcuda;

extern "C" {

//===----------------------------------------------------------------------===//
// cuBLAS entry points.
//===----------------------------------------------------------------------===//

NULLCUDA_EXPORT cublasStatus_t CUBLASWINAPI
cublasCreate(cublasHandle_t *handle) {
  std::lock_guard<std::mutex> lock(enter());
  if (!handle)
    return blasFail(CUBLAS_STATUS_INVALID_VALUE, "cublasCreate: null result");
  // cuBLAS allocates device memory while it starts.
  if (refuseDuringCapture("cublasCreate"))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!currentContext)
    return blasFail(CUBLAS_STATUS_NOT_INITIALIZED,
                    "cublasCreate: no context is current");
  auto *context = new cublasContext();
  context->context = currentContext;
  state().blasHandles.insert(context);
  *handle = context;
  return CUBLAS_STATUS_SUCCESS;
}

NULLCUDA_EXPORT cublasStatus_t CUBLASWINAPI
cublasDestroy(cublasHandle_t handle) {
  std::lock_guard<std::mutex> lock(enter());
  if (!state().blasHandles.erase(handle))
    return blasFail(CUBLAS_STATUS_NOT_INITIALIZED,
                    "cublasDestroy: unknown handle " + hex(handle));
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

NULLCUDA_EXPORT cublasStatus_t CUBLASWINAPI
cublasSetStream(cublasHandle_t handle, cudaStream_t streamId) {
  std::lock_guard<std::mutex> lock(enter());
  State &s = state();
  if (!s.blasHandles.count(handle))
    return blasFail(CUBLAS_STATUS_NOT_INITIALIZED,
                    "cublasSetStream: unknown handle " + hex(handle));
  bool isDefault = streamId == nullptr || streamId == CU_STREAM_LEGACY ||
                   streamId == CU_STREAM_PER_THREAD;
  if (!isDefault && !s.streams.count(streamId))
    return blasFail(CUBLAS_STATUS_INVALID_VALUE,
                    "cublasSetStream: unknown stream " + hex(streamId));
  handle->stream = streamId;
  // As documented for cuBLAS, setting the stream drops a user workspace.
  handle->workspace = 0;
  handle->workspaceBytes = 0;
  handle->workspaceSet = false;
  return CUBLAS_STATUS_SUCCESS;
}

NULLCUDA_EXPORT cublasStatus_t CUBLASWINAPI cublasSetWorkspace(
    cublasHandle_t handle, void *workspace, size_t workspaceSizeInBytes) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cublasSetWorkspace";
  if (!state().blasHandles.count(handle))
    return blasFail(CUBLAS_STATUS_NOT_INITIALIZED,
                    entry + ": unknown handle " + hex(handle));
  auto p = reinterpret_cast<uintptr_t>(workspace);
  if (workspaceSizeInBytes > 0) {
    if (p % kAllocationAlignment != 0)
      return blasFail(CUBLAS_STATUS_INVALID_VALUE,
                      entry + ": workspace " + hex(p) +
                          " is not 256-byte aligned");
    const AllocationMap::value_type *allocation = findAllocation(p);
    if (!allocation || !contains(*allocation, p, workspaceSizeInBytes))
      return blasViolation(CUBLAS_STATUS_INVALID_VALUE,
                           entry + ": " + std::to_string(workspaceSizeInBytes) +
                               " bytes at " + hex(p) +
                               " are not inside one live device allocation");
  }
  handle->workspace = workspaceSizeInBytes > 0 ? p : 0;
  handle->workspaceBytes = workspaceSizeInBytes;
  handle->workspaceSet = true;
  return CUBLAS_STATUS_SUCCESS;
}

NULLCUDA_EXPORT cublasStatus_t CUBLASWINAPI
cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  std::lock_guard<std::mutex> lock(enter());
  if (!state().blasHandles.count(handle))
    return blasFail(CUBLAS_STATUS_NOT_INITIALIZED,
                    "cublasSetMathMode: unknown handle " + hex(handle));
  unsigned base = mode & ~static_cast<unsigned>(
                             CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  if (base != CUBLAS_DEFAULT_MATH && base != CUBLAS_TENSOR_OP_MATH &&
      base != CUBLAS_PEDANTIC_MATH && base != CUBLAS_TF32_TENSOR_OP_MATH &&
      base != CUBLAS_FP32_EMULATED_BF16X9_MATH &&
      base != CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH)
    return blasFail(CUBLAS_STATUS_INVALID_VALUE,
                    "cublasSetMathMode: unknown mode " + std::to_string(mode));
  // The CPU computes in FP32 whatever the mode; it is only remembered.
  handle->mathMode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

NULLCUDA_EXPORT const char *CUBLASWINAPI
cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_LICENSE_ERROR:
    return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

} // extern "C"

namespace {

/// cublasSgemm and cublasGemmEx after their own checks of the types:
/// cuBLAS's argument checks, then the GEMM on the handle's stream (or into
/// its capture).
cublasStatus_t gemm(const std::string &entry, GemmCall g, const float *alpha,
                    const float *beta) {
  State &s = state();
  if (!s.blasHandles.count(g.handle))
    return blasFail(CUBLAS_STATUS_NOT_INITIALIZED,
                    entry + ": unknown handle " + hex(g.handle));
  // A handle works with its device current, on a stream of its device.
  if (g.handle->context != currentContext ||
      streamContext(g.handle->stream) != g.handle->context)
    return blasViolation(
        CUBLAS_STATUS_EXECUTION_FAILED,
        entry + ": a handle of " + deviceName(g.handle->context) + " with " +
            deviceName(currentContext) + " current and a stream of " +
            deviceName(streamContext(g.handle->stream)));
  // cuBLAS's own argument checks.
  auto validOp = [](cublasOperation_t op) {
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
  };
  int m = g.m, n = g.n, k = g.k;
  std::string args =
      " (m=" + std::to_string(m) + " n=" + std::to_string(n) +
      " k=" + std::to_string(k) + ", lda=" + std::to_string(g.lda) +
      " ldb=" + std::to_string(g.ldb) + " ldc=" + std::to_string(g.ldc) + ")";
  if (!validOp(g.transa) || !validOp(g.transb))
    return blasFail(CUBLAS_STATUS_INVALID_VALUE,
                    entry + ": invalid operation " + std::to_string(g.transa) +
                        "/" + std::to_string(g.transb));
  if (m < 0 || n < 0 || k < 0)
    return blasFail(CUBLAS_STATUS_INVALID_VALUE,
                    entry + ": negative size" + args);
  if (g.lda < std::max(1, g.transa == CUBLAS_OP_N ? m : k) ||
      g.ldb < std::max(1, g.transb == CUBLAS_OP_N ? k : n) ||
      g.ldc < std::max(1, m))
    return blasFail(CUBLAS_STATUS_INVALID_VALUE,
                    entry + ": leading dimension too small" + args);
  if (!alpha || !beta)
    return blasFail(CUBLAS_STATUS_INVALID_VALUE,
                    entry + ": null alpha or beta");
  // CUBLAS_POINTER_MODE_HOST: alpha and beta are read on the host now.
  for (const float *scalar : {alpha, beta}) {
    const AllocationMap::value_type *allocation =
        findAllocation(reinterpret_cast<uintptr_t>(scalar));
    if (allocation && !allocation->second.managed)
      return blasViolation(CUBLAS_STATUS_INVALID_VALUE,
                           entry + ": alpha or beta " + hex(scalar) +
                               " is device memory, the pointer mode is host");
  }
  g.alpha = *alpha;
  g.beta = *beta;
  g.workspace = g.handle->workspace;
  g.workspaceBytes = g.handle->workspaceBytes;
  g.workspaceSet = g.handle->workspaceSet;
  CUstream_st *capture = nullptr;
  if (routeWork(entry, g.handle->stream, capture) != CUDA_SUCCESS)
    return CUBLAS_STATUS_EXECUTION_FAILED;
  if (cublasStatus_t st = checkGemmOperands(entry, g)) {
    if (capture)
      capture->invalidated = true;
    return st;
  }
  if (capture) {
    Node node(NodeKind::Gemm);
    node.gemm = g;
    capture->nodes.push_back(std::move(node));
    return CUBLAS_STATUS_SUCCESS;
  }
  gemmAccesses(g.handle->stream, g, entry);
  runGemm(g);
  ++s.count.gemms;
  ++s.count.gemmsByDevice[g.handle->context->ordinal];
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace

extern "C" {

NULLCUDA_EXPORT cublasStatus_t CUBLASWINAPI cublasSgemm(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const float *alpha, const float *A, int lda,
    const float *B, int ldb, const float *beta, float *C, int ldc) {
  std::lock_guard<std::mutex> lock(enter());
  GemmCall g{handle, transa, transb, m,   n,    k, 0.0f,
             A,      lda,    B,      ldb, 0.0f, C, ldc};
  return gemm("cublasSgemm", g, alpha, beta);
}

/// The one mixed-precision form the runtime calls: bf16 A and B, f32 C and
/// f32 compute with host-side f32 alpha and beta. Any other combination is
/// CUBLAS_STATUS_NOT_SUPPORTED, named.
NULLCUDA_EXPORT cublasStatus_t CUBLASWINAPI cublasGemmEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
    int lda, const void *B, cudaDataType Btype, int ldb, const void *beta,
    void *C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
    cublasGemmAlgo_t algo) {
  std::lock_guard<std::mutex> lock(enter());
  const std::string entry = "cublasGemmEx";
  if (Atype != CUDA_R_16BF || Btype != CUDA_R_16BF || Ctype != CUDA_R_32F ||
      computeType != CUBLAS_COMPUTE_32F)
    return blasFail(CUBLAS_STATUS_NOT_SUPPORTED,
                    entry +
                        ": the null device runs bf16 A and B with f32 C "
                        "and CUBLAS_COMPUTE_32F only (types " +
                        std::to_string(Atype) + "/" + std::to_string(Btype) +
                        "/" + std::to_string(Ctype) + ", compute " +
                        std::to_string(computeType) + ")");
  if (algo != CUBLAS_GEMM_DEFAULT)
    return blasFail(CUBLAS_STATUS_NOT_SUPPORTED,
                    entry + ": algorithm " + std::to_string(algo) +
                        " (the runtime asks for CUBLAS_GEMM_DEFAULT)");
  GemmCall g{handle,
             transa,
             transb,
             m,
             n,
             k,
             0.0f,
             A,
             lda,
             B,
             ldb,
             0.0f,
             static_cast<float *>(C),
             ldc,
             /*bf16=*/true};
  return gemm(entry, g, static_cast<const float *>(alpha),
              static_cast<const float *>(beta));
}

} // extern "C"
