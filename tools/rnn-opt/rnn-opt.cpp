//===- rnn-opt.cpp - the rnnc optimizer driver ----------------------------===//
//
// mlir-opt for rnnc: every rnn pass and pipeline, plus the upstream dialects
// and passes the pipelines use.
//
//===----------------------------------------------------------------------===//

#include "rnn/InitAll.h"

#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace rnn {
/// Test-only passes (test/lib).
void registerTestPasses();
} // namespace rnn
} // namespace mlir
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::rnn::registerAllDialects(registry);
  mlir::rnn::registerAllPasses();
  mlir::rnn::registerTestPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "rnnc optimizer driver\n", registry));
}
