//===- CudaBlas.cpp - Device GEMM through cuBLAS --------------------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: `_mlir_ciface_rnnrt_cuda_sgemm`, the device GEMM of compiled code,
// and `_mlir_ciface_rnnrt_cuda_gemm_bf16` (bf16 operands, f32 C and
// accumulation), on cuBLAS loaded with dlopen; the TF32 switch; the
// backend description.
//
// Why: as on the CPU, the GEMMs carry most of an LSTM/GRU step and a vendor
// library beats generated code. cuBLAS is column-major; GemmPlan.h turns the
// row-major memref call into the equivalent column-major one (operands
// swapped), the same planner the CPU entry point uses. An eager GEMM gets
// the workspace of its stream (the runtime's, a library caller's, a
// wavefront's lanes: CudaLanes.cpp), allocated at the stream's first eager
// GEMM; one captured for a library's graph replay gets its lane's replay
// workspace, allocated before the capture; one captured in the caller's
// own graph gets none (see readyBlas). GEMMs that may run at once never
// share a workspace (cuBLAS's default pool would be shared by every stream
// and graph), a capture allocates nothing, and a replayed graph's GEMMs
// have the workspace of the eager call they were captured from, so that
// cuBLAS can choose the same kernels. cublasSetStream drops the workspace, so
// it is set again after every change of stream. Like the library itself, the
// workspaces are not program memory and are not accounted. The handle is
// one per device (a handle belongs to its context) and holds a stream and a
// workspace, so a GEMM holds it locked from setting them to enqueueing (threads
// may call at once, each on its own stream).
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"
#include "GemmPlan.h"

#include "rnn/Runtime/Cuda.h"
#include "rnn/Runtime/Runtime.h"

#include <cublas_v2.h>

#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <glob.h>
#include <map>
#include <mutex>
#include <vector>

using namespace rnn::runtime;
using namespace rnn::runtime::cuda;

/// Every cuBLAS entry point the runtime calls (macro-expanded as in
/// CudaDriver.h: cublasSgemm is cublasSgemm_v2).
#define RNN_CUBLAS_FUNCTIONS(X)                                                \
  X(cublasCreate)                                                              \
  X(cublasDestroy)                                                             \
  X(cublasSetStream)                                                           \
  X(cublasSetWorkspace)                                                        \
  X(cublasSetMathMode)                                                         \
  X(cublasSgemm)                                                               \
  X(cublasGetStatusName)

namespace {
/// cuBLAS's recommended workspace on Hopper.
constexpr size_t kWorkspaceBytes = 32u << 20;
} // namespace

/// cuBLAS's entry points (one set per BlasState, each the same).
struct rnn::runtime::cuda::BlasApi {
#define RNN_CUBLAS_DECLARE(name) decltype(&::name) name = nullptr;
  RNN_CUBLAS_FUNCTIONS(RNN_CUBLAS_DECLARE)
#undef RNN_CUBLAS_DECLARE
  /// Typed by hand: C++ code also sees an inline overload that takes the
  /// compute type as a cudaDataType.
  cublasStatus_t (*cublasGemmEx)(cublasHandle_t, cublasOperation_t,
                                 cublasOperation_t, int, int, int, const void *,
                                 const void *, cudaDataType, int, const void *,
                                 cudaDataType, int, const void *, void *,
                                 cudaDataType, int, cublasComputeType_t,
                                 cublasGemmAlgo_t) = nullptr;
};

/// cuBLAS on one device: the loaded library and a handle of the device's
/// context, bound to the runtime's stream there.
struct rnn::runtime::cuda::BlasState {
  BlasApi api;
  /// Guards everything below, held by a GEMM from readyBlas until it is
  /// enqueued (BlasCall).
  std::mutex mutex;
  cublasHandle_t handle = nullptr;
  /// The math mode last set on the handle.
  bool tf32 = false;
  /// The stream and the workspace (0: none) last set on the handle.
  CUstream stream = nullptr;
  CUdeviceptr workspace = 0;
  /// Each stream's workspace (kWorkspaceBytes): the runtime stream's made
  /// with the handle, the others' at their first eager GEMM. Kept as long
  /// as the handle.
  std::map<CUstream, CUdeviceptr> workspaces;
  /// The workspace of each lane of a call captured for graph replay
  /// (readyReplayWorkspaces), kept as long as the handle.
  std::vector<CUdeviceptr> replayWorkspaces;
};

namespace {

/// Intentionally leaked, like the driver's state (CudaDriver.cpp). Each
/// device's BlasState is its CudaState's.
struct BlasGlobals {
  /// Held while a device's cuBLAS starts.
  std::mutex mutex;
  std::atomic<bool> tf32Requested{false};
};

BlasGlobals &blasGlobals() {
  static BlasGlobals *g = new BlasGlobals();
  return *g;
}

std::string statusText(const BlasApi &api, cublasStatus_t status) {
  const char *name =
      api.cublasGetStatusName ? api.cublasGetStatusName(status) : nullptr;
  return name ? name : "cuBLAS status " + std::to_string(status);
}

/// Where cuBLAS 13 lives when the loader does not know it: the CUDA
/// toolkit's library folders, and the folders of the NVIDIA wheels an
/// installed PyTorch depends on (`nvidia/cu13/lib` for CUDA 13 wheels,
/// `nvidia/cublas/lib` for the older per-library ones), under the usual
/// Python prefixes.
std::vector<std::string> cublasCandidates() {
  std::vector<std::string> prefixes;
  for (const char *variable : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char *value = std::getenv(variable); value && *value)
      prefixes.push_back(value);
  if (const char *home = std::getenv("HOME"); home && *home) {
    prefixes.push_back(std::string(home) + "/.local");
    prefixes.push_back(std::string(home) + "/.pyenv/versions/*");
  }
  for (const char *prefix : {"/usr/local", "/usr", "/opt/conda"})
    prefixes.push_back(prefix);

  std::vector<std::string> patterns;
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(variable); value && *value)
      for (const char *lib : {"/lib64/", "/lib/"})
        patterns.push_back(std::string(value) + lib + "libcublas.so.13");
  patterns.push_back("/usr/local/cuda/lib64/libcublas.so.13");
  patterns.push_back("/usr/local/cuda/lib/libcublas.so.13");
  for (const std::string &prefix : prefixes)
    for (const char *packages : {"site-packages", "dist-packages"})
      for (const char *wheel : {"cu13", "cublas"})
        patterns.push_back(prefix + "/lib/python3*/" + packages + "/nvidia/" +
                           wheel + "/lib/libcublas.so.13");

  std::vector<std::string> found;
  for (const std::string &pattern : patterns) {
    glob_t matches;
    if (glob(pattern.c_str(), 0, nullptr, &matches) == 0)
      for (size_t i = 0; i < matches.gl_pathc; ++i)
        found.push_back(matches.gl_pathv[i]);
    globfree(&matches);
  }
  return found;
}

/// dlopens cuBLAS: `$RNNRT_LIBCUBLAS` alone if set; else the CUDA 13 soname,
/// the unversioned name, then cublasCandidates(). Returns null and sets
/// `error`, naming why the loader refused the names tried, on failure.
void *openLibrary(std::string &error) {
  const char *override = std::getenv("RNNRT_LIBCUBLAS");
  std::vector<std::string> names = {"libcublas.so.13", "libcublas.so"};
  if (override && *override)
    names = {override};
  error = "cuBLAS not found:";
  for (const std::string &name : names) {
    if (void *library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))
      return library;
    const char *why = dlerror();
    error += " dlopen(" + name + "): " + (why ? why : "unknown error") + ";";
  }
  error.pop_back();
  if (override && *override)
    return nullptr;
  // Files found on disk: a failure there adds nothing worth naming.
  for (const std::string &path : cublasCandidates())
    if (void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL))
      return library;
  error += " (nor in the CUDA toolkit or an installed PyTorch's NVIDIA "
           "wheels; give --cublas=PATH or RNNRT_LIBCUBLAS)";
  return nullptr;
}

/// Brings up cuBLAS on the runtime's stream. Returns an empty string or the
/// error. The library stays loaded even on failure (it may have started
/// the CUDA runtime), but the handle and the workspace are released.
std::string startBlas(CudaState &cuda, BlasState &blas) {
  std::string error;
  void *library = openLibrary(error);
  if (!library)
    return error;
#define RNN_CUBLAS_RESOLVE(name)                                               \
  if (!(blas.api.name = reinterpret_cast<decltype(blas.api.name)>(             \
            dlsym(library, RNN_CUDA_SYMBOL(name)))))                           \
    return std::string("cuBLAS lacks ") + RNN_CUDA_SYMBOL(name);
  RNN_CUBLAS_FUNCTIONS(RNN_CUBLAS_RESOLVE)
  RNN_CUBLAS_RESOLVE(cublasGemmEx)
#undef RNN_CUBLAS_RESOLVE

  if (cublasStatus_t st = blas.api.cublasCreate(&blas.handle))
    return "cuBLAS initialization failed: cublasCreate: " +
           statusText(blas.api, st);
  CUdeviceptr workspace = 0;
  if (CUresult r = cuda.api.cuMemAlloc(&workspace, kWorkspaceBytes)) {
    blas.api.cublasDestroy(blas.handle);
    return "cuBLAS workspace allocation failed: " + describe(cuda, r);
  }
  cublasStatus_t st = blas.api.cublasSetStream(blas.handle, cuda.stream);
  blas.stream = cuda.stream;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = blas.api.cublasSetWorkspace(
        blas.handle, reinterpret_cast<void *>(workspace), kWorkspaceBytes);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = blas.api.cublasSetMathMode(blas.handle, CUBLAS_DEFAULT_MATH);
  if (st != CUBLAS_STATUS_SUCCESS) {
    blas.api.cublasDestroy(blas.handle);
    cuda.api.cuMemFree(workspace);
    return "cuBLAS setup failed: " + statusText(blas.api, st);
  }
  blas.workspaces[cuda.stream] = workspace;
  blas.workspace = workspace;
  return "";
}

cublasOperation_t toCublas(bool transposed) {
  return transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
}

} // namespace

/// cuBLAS on `cuda`'s device (its context current), started if need be;
/// null with `error` set on failure.
static BlasState *blasOn(CudaState &cuda, std::string &error) {
  if (BlasState *blas = cuda.blas.load(std::memory_order_acquire))
    return blas;
  std::lock_guard<std::mutex> lock(blasGlobals().mutex);
  if (BlasState *blas = cuda.blas.load(std::memory_order_relaxed))
    return blas;
  auto *blas = new BlasState();
  error = startBlas(cuda, *blas);
  if (!error.empty()) {
    delete blas;
    return nullptr;
  }
  cuda.blas.store(blas, std::memory_order_release);
  return blas;
}

std::string rnn::runtime::cuda::initializeBlas() {
  std::string error = initialize();
  if (!error.empty())
    return error;
  CudaState *cuda = acquire("initializeBlas");
  if (!cuda)
    return "cuBLAS initialization failed: the CUDA context cannot be made "
           "current";
  blasOn(*cuda, error);
  return error;
}

bool rnn::runtime::cuda::readyReplayWorkspaces(CudaState &cuda,
                                               const char *entry) {
  BlasState *blas = cuda.blas.load(std::memory_order_acquire);
  if (!blas)
    return true;
  std::lock_guard<std::mutex> lock(blas->mutex);
  while (blas->replayWorkspaces.size() < lanesUsed()) {
    CUdeviceptr made = 0;
    if (!check(cuda, cuda.api.cuMemAlloc(&made, kWorkspaceBytes), entry))
      return false;
    blas->replayWorkspaces.push_back(made);
  }
  return true;
}

void rnn::runtime::cuda::setTF32(bool enabled) {
  blasGlobals().tf32Requested = enabled;
}

std::string rnn::runtime::cuda::gemmBackend() {
  return blasGlobals().tf32Requested ? "cublas-tf32" : "cublas";
}

namespace {

/// cuBLAS's handle for one GEMM, locked until the BlasCall is destroyed
/// (after the GEMM is enqueued): another thread's GEMM would set its own
/// stream and workspace on the shared handle.
struct BlasCall {
  BlasState *blas = nullptr;
  std::unique_lock<std::mutex> lock;
  explicit operator bool() const { return blas != nullptr; }
  BlasState *operator->() const { return blas; }
};

/// The cuBLAS handle ready for a GEMM of entry point `entry` on the
/// caller's stream, in the requested math mode; null with the error
/// recorded.
BlasCall readyBlas(const char *entry) {
  CudaState *cuda = acquire(entry);
  if (!cuda)
    return {};
  BlasGlobals &g = blasGlobals();
  BlasState *blas = cuda->blas.load(std::memory_order_acquire);
  if (!blas) {
    // Starting cuBLAS allocates and synchronizes, which would invalidate
    // the capture.
    if (cuda->capturing) {
      recordError(std::string(entry) +
                  ": cuBLAS is not initialized; call initializeBlas() before "
                  "capturing a graph");
      return {};
    }
    std::string error;
    blas = blasOn(*cuda, error);
    if (!blas) {
      recordError(std::string(entry) + ": " + error);
      return {};
    }
  }
  std::unique_lock<std::mutex> lock(blas->mutex);
  bool tf32 = g.tf32Requested;
  if (tf32 != blas->tf32) {
    cublasStatus_t st = blas->api.cublasSetMathMode(
        blas->handle, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) {
      recordError(std::string(entry) +
                  ": cublasSetMathMode: " + statusText(blas->api, st));
      return {};
    }
    blas->tf32 = tf32;
  }
  // A library call runs on its caller's stream; a wavefront's layers on
  // their lanes' streams. Eager GEMMs use their stream's workspace, and so
  // do those of the runtime's own step graph (replayed on its stream only,
  // never beside eager work). A library's replayed graphs run one after
  // another on its replay stream, beside eager work: their GEMMs use the
  // replay workspaces, by lane. Those of the caller's own graph use none:
  // it may run beside anything. A capture allocates nothing.
  CUstream stream = currentStream(*cuda);
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!check(*cuda, cuda->api.cuStreamIsCapturing(stream, &capture), entry))
    return {};
  CUdeviceptr workspace = 0;
  if (capture == CU_STREAM_CAPTURE_STATUS_NONE && !cuda->capturing) {
    CUdeviceptr &made = blas->workspaces[stream];
    if (!made &&
        !check(*cuda, cuda->api.cuMemAlloc(&made, kWorkspaceBytes), entry))
      return {};
    workspace = made;
  } else if (cuda->capturing) {
    auto found = blas->workspaces.find(stream);
    workspace = found == blas->workspaces.end() ? 0 : found->second;
  } else if (inReplayCapture()) {
    unsigned lane = currentLane(*cuda);
    if (lane < blas->replayWorkspaces.size())
      workspace = blas->replayWorkspaces[lane];
  }
  if (stream == blas->stream && workspace == blas->workspace)
    return {blas, std::move(lock)};
  cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
  const char *call = "cublasSetStream";
  if (stream != blas->stream)
    st = blas->api.cublasSetStream(blas->handle, stream);
  if (st == CUBLAS_STATUS_SUCCESS) {
    call = "cublasSetWorkspace";
    st = blas->api.cublasSetWorkspace(blas->handle,
                                      reinterpret_cast<void *>(workspace),
                                      workspace ? kWorkspaceBytes : 0);
  }
  if (st != CUBLAS_STATUS_SUCCESS) {
    // The handle's stream and workspace are unknown: set both next time.
    blas->stream = nullptr;
    recordError(std::string(entry) + ": " + call + ": " +
                statusText(blas->api, st));
    return {};
  }
  blas->stream = stream;
  blas->workspace = workspace;
  return {blas, std::move(lock)};
}

/// Checks and plans the memref GEMM of `entry` as a column-major call;
/// false, with the error recorded, if there is nothing to run or the
/// layout has no BLAS form.
template <typename T>
bool planCall(const char *entry, int64_t transA, int64_t transB,
              gemm::Memref2DOf<T> *A, gemm::Memref2DOf<T> *B,
              gemm::Memref2DOf<gemm::Product<T>> *C,
              gemm::ColumnMajorCallOf<T> &call) {
  rnn::runtime::countGemmCall();
  bool ta = transA != 0, tb = transB != 0;
  gemm::Sizes sizes = gemm::checkShapes(entry, ta, tb, A, B, C);
  if (sizes.M == 0 || sizes.N == 0)
    return false;
  gemm::RowMajorCallOf<T> rowMajor;
  if (!gemm::planRowMajor(ta, tb, *A, *B, *C, sizes, rowMajor)) {
    recordError(std::string(entry) +
                ": operand layout is neither row- nor column-major");
    return false;
  }
  call = gemm::toColumnMajor(rowMajor);
  return true;
}

} // namespace

extern "C" void _mlir_ciface_rnnrt_cuda_sgemm(int64_t transA, int64_t transB,
                                              float alpha, float beta,
                                              StridedMemRefType<float, 2> *A,
                                              StridedMemRefType<float, 2> *B,
                                              StridedMemRefType<float, 2> *C) {
  constexpr const char *kEntry = "rnnrt_cuda_sgemm";
  gemm::ColumnMajorCall call;
  if (!planCall(kEntry, transA, transB, A, B, C, call))
    return;
  BlasCall blas = readyBlas(kEntry);
  if (!blas)
    return;
  cublasStatus_t st = blas->api.cublasSgemm(
      blas->handle, toCublas(call.transA), toCublas(call.transB), call.m,
      call.n, call.k, &alpha, call.a, call.lda, call.b, call.ldb, &beta, call.c,
      call.ldc);
  if (st != CUBLAS_STATUS_SUCCESS)
    recordError(std::string(kEntry) +
                ": cublasSgemm: " + statusText(blas->api, st));
}

extern "C" void
_mlir_ciface_rnnrt_cuda_gemm_bf16(int64_t transA, int64_t transB, float alpha,
                                  float beta, StridedMemRefType<uint16_t, 2> *A,
                                  StridedMemRefType<uint16_t, 2> *B,
                                  StridedMemRefType<float, 2> *C) {
  constexpr const char *kEntry = "rnnrt_cuda_gemm_bf16";
  gemm::ColumnMajorCallOf<uint16_t> call;
  if (!planCall(kEntry, transA, transB, A, B, C, call))
    return;
  BlasCall blas = readyBlas(kEntry);
  if (!blas)
    return;
  // bf16 operands, f32 products and sums: the tensor cores' bf16 path
  // whatever the TF32 switch.
  cublasStatus_t st = blas->api.cublasGemmEx(
      blas->handle, toCublas(call.transA), toCublas(call.transB), call.m,
      call.n, call.k, &alpha, call.a, CUDA_R_16BF, call.lda, call.b,
      CUDA_R_16BF, call.ldb, &beta, call.c, CUDA_R_32F, call.ldc,
      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS)
    recordError(std::string(kEntry) +
                ": cublasGemmEx: " + statusText(blas->api, st));
}
