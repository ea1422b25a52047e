//===- InitAll.h - register everything rnnc uses ----------------*- C++ -*-===//
//
// One place that registers the dialects, interfaces, passes and pipelines
// the rnn tools need. Defined in lib/Pipelines so that tools stay light.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_INITALL_H
#define RNN_INITALL_H

namespace mlir {
class DialectRegistry;
namespace rnn {

/// The rnn dialect, the upstream dialects the pipelines produce, and their
/// bufferization and LLVM translation interfaces.
void registerAllDialects(DialectRegistry &registry);

/// rnn passes and pipelines, and the upstream passes the pipelines use.
void registerAllPasses();

} // namespace rnn
} // namespace mlir

#endif // RNN_INITALL_H
