//===- NoCudaRunTarget.cpp - rnn-run without the CUDA runtime -------------===//
//
// createCudaTarget (RunTarget.h) in a build without the CUDA toolkit's
// headers, where the CUDA runtime is not built.
//
//===----------------------------------------------------------------------===//

#include "RunTarget.h"

std::unique_ptr<rnn::run::RunTarget> rnn::run::createCudaTarget(llvm::StringRef,
                                                                bool) {
  fail("--target=cuda is not supported by this build (built without the "
       "CUDA toolkit headers; --emit=ptx prints the kernels)");
}
