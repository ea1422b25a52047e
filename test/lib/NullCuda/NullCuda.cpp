//===- NullCuda.cpp - A CUDA driver and cuBLAS without a GPU --------------===//
//
// Part of the rnnc project.
//
//===----------------------------------------------------------------------===//
//
// What: libnullcuda.so, one shared library that exports the CUDA driver
// entry points and the cuBLAS entry points the runtime dlopens (see
// RNN_CUDA_DRIVER_FUNCTIONS in runtime/CudaDriver.h and RNN_CUBLAS_FUNCTIONS
// in runtime/CudaBlas.cpp), under the versioned symbol names cuda.h and
// cublas_v2.h map the API names to. Device memory is host memory. Kernels
// are not executed, but every launch is checked against the kernel's
// signature and the live allocations; SGEMM and the bf16 GemmEx run on the
// CPU through OpenBLAS. Stream capture records the work as graph nodes, which a
// graph launch replays (and checks) in order. Streams, events and
// synchronizations are modeled as the order they impose, and work on two
// streams that touches one allocation unordered is reported as a race. With
// NULLCUDA_REPORT naming a file, counters are written there as one JSON
// object when the process exits.
//
// Why: CI machines without a GPU must still run the host path of
// `rnn-run --target=cuda` end to end: module loading, argument passing,
// buffer sizes, capture rules and the cuBLAS calls. Pointing both
// RNNRT_LIBCUDA and RNNRT_LIBCUBLAS at this library (one dlopen'ed
// instance, so one state) checks what a GPU would reject or fault on and
// reports it as the driver would, an error code, plus one line on stderr
// starting with `nullcuda: ` and a count in the report. Kernel arguments are
// checked through the `// rnnc.kernel NAME ARGS` comment the compiler
// appends to the PTX for each kernel, since the PTX alone does not say
// which parameters form a memref descriptor.
//
// This file holds the global state, the errors and the exit report;
// NullCuda.h lists the others, one per concern.
//
//===----------------------------------------------------------------------===//

#include "NullCuda.h"

namespace nullcuda {

//===----------------------------------------------------------------------===//
// Global state, errors and the report.
//===----------------------------------------------------------------------===//











State &state() {
  static State *s = new State();
  return *s;
}

thread_local CUctx_st *currentContext = nullptr;

CUctx_st *primaryContext(int ordinal) {
  if (ordinal < 0 || ordinal >= deviceCount())
    return nullptr;
  CUctx_st *context = &state().primaryContexts[ordinal];
  context->ordinal = ordinal;
  return context;
}

CUctx_st *streamContext(CUstream stream) {
  if (stream == nullptr || stream == CU_STREAM_LEGACY ||
      stream == CU_STREAM_PER_THREAD)
    return currentContext;
  return stream->context;
}

std::string deviceName(const CUctx_st *context) {
  return context ? "device " + std::to_string(context->ordinal) : "no device";
}

void writeReport() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  const Counters &c = s.count;
  const std::pair<const char *, uint64_t> fields[] = {
      {"allocs", c.allocs},
      {"frees", c.frees},
      {"peak_bytes", c.peakBytes},
      {"live_bytes", c.liveBytes},
      {"launches", c.launches},
      {"graph_launches", c.graphLaunches},
      {"replayed_launches", c.replayedLaunches},
      {"gemms", c.gemms},
      {"replayed_gemms", c.replayedGemms},
      {"replayed_gemms_without_workspace", c.replayedGemmsWithoutWorkspace},
      {"bf16_gemms", c.bf16Gemms},
      {"syncs", c.syncs},
      {"module_loads", c.moduleLoads},
      {"get_function", c.getFunction},
      {"captures", c.captures},
      {"captured_nodes", c.capturedNodes},
      {"violations", c.violations},
      {"errors", c.errors},
      {"work_streams", c.workStreams.size()},
      {"live_graphs", s.graphs.size()},
      {"live_graph_execs", s.execs.size()},
  };
  std::string json = "{";
  for (const auto &field : fields) {
    if (json.size() > 1)
      json += ", ";
    json +=
        std::string("\"") + field.first + "\": " + std::to_string(field.second);
  }
  // By device: {"0": n, ...}.
  for (const auto &[name, counts] :
       {std::pair<const char *, const std::map<int, uint64_t> *>{
            "launches_by_device", &c.launchesByDevice},
        {"gemms_by_device", &c.gemmsByDevice}}) {
    json += std::string(", \"") + name + "\": {";
    bool first = true;
    for (const auto &[ordinal, count] : *counts) {
      json += (first ? "\"" : ", \"") + std::to_string(ordinal) +
              "\": " + std::to_string(count);
      first = false;
    }
    json += "}";
  }
  json += "}\n";
  // Written next to the target and renamed, so that a reader never sees a
  // partial report.
  std::string temporary = s.reportPath + ".tmp." + std::to_string(getpid());
  FILE *file = std::fopen(temporary.c_str(), "w");
  bool ok = file && std::fputs(json.c_str(), file) >= 0;
  if (file)
    ok = std::fclose(file) == 0 && ok;
  if (!ok || std::rename(temporary.c_str(), s.reportPath.c_str()) != 0) {
    std::fprintf(stderr, "nullcuda: cannot write the report %s\n",
                 s.reportPath.c_str());
    std::remove(temporary.c_str());
  }
}

/// Registers the exit report on first use and returns the state's mutex,
/// which every entry point holds for its whole duration.
std::mutex &enter() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char *path = std::getenv("NULLCUDA_REPORT");
    if (path && *path) {
      state().reportPath = path;
      std::atexit(writeReport);
    }
  });
  return state().mutex;
}

std::string hex(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof(buffer), "0x%llx",
                static_cast<unsigned long long>(value));
  return buffer;
}

std::string hex(const void *p) { return hex(reinterpret_cast<uintptr_t>(p)); }

std::string str(Int128 value) {
  if (value < 0)
    return "-" + str(-value);
  std::string out;
  do {
    out.insert(out.begin(),
               static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  } while (value != 0);
  return out;
}

/// Prints `message` as one line (it may quote PTX).
void print(std::string message) {
  for (char &c : message)
    if (c == '\n' || c == '\r')
      c = ' ';
  std::fprintf(stderr, "nullcuda: %s\n", message.c_str());
}

/// Reports a failed call: counts it and prints `message`.
CUresult fail(CUresult code, const std::string &message) {
  ++state().count.errors;
  print(message);
  return code;
}

/// A failure that a GPU would also reject or fault on: an out-of-bounds
/// access or an operation that breaks a capture.
CUresult violation(CUresult code, const std::string &message) {
  ++state().count.violations;
  return fail(code, message);
}

cublasStatus_t blasFail(cublasStatus_t status, const std::string &message) {
  ++state().count.errors;
  print(message);
  return status;
}

cublasStatus_t blasViolation(cublasStatus_t status,
                             const std::string &message) {
  ++state().count.violations;
  return blasFail(status, message);
}

/// The checks of every entry point that needs an initialized driver and a
/// current context.
CUresult ready(const std::string &entry) {
  if (!state().initialized)
    return fail(CUDA_ERROR_NOT_INITIALIZED,
                entry + ": cuInit has not been called");
  if (!currentContext)
    return fail(CUDA_ERROR_INVALID_CONTEXT,
                entry + ": no context is current on this thread");
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Error names.
//===----------------------------------------------------------------------===//



const ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
     "invalid resource handle"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
     "the operation cannot be performed in the present state"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
     "operation not supported"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
     "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture"},
    {CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
     "operation would make the legacy stream depend on a capturing blocking "
     "stream"},
    {CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
     "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
     "attempt to terminate a thread-local capture sequence from another "
     "thread"},
};


const ErrorText *findError(CUresult code) {
  for (const ErrorText &error : kErrors)
    if (error.code == code)
      return &error;
  return nullptr;
}

} // namespace nullcuda
