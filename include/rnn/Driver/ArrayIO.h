//===- ArrayIO.h - a compiled function's arrays as npz ---------*- C++ -*-===//
//
// rnn-run exchanges a compiled function's arguments and results as npz
// arrays named as PyTorch names them (Model.h's Signature says which
// argument or result is which array): inputs read from a file (checked
// against the signature, a layer's slice of a stacked array) or generated
// from a seed, and results gathered into arrays (per-layer states stacked
// as [L, ...]). Errors name the array and what is wrong; `source` is the
// name of the file the arrays come from.
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DRIVER_ARRAYIO_H
#define RNN_DRIVER_ARRAYIO_H

#include "rnn/Driver/Model.h"
#include "rnn/Support/Npz.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rnn {
namespace driver {

/// The shape of the npz array that holds `t` (with its stacked layers).
std::vector<int64_t> arrayShape(const NamedTensor &t);

/// Whether `arg` is a layer's initial state (`h0`, `c0`, ...: a per-layer
/// tensor named `<state>0`), which an input file may leave out: zeros, as
/// in PyTorch.
bool isInitialState(const NamedTensor &arg);

/// "<source>: missing array 'a'" or "...: missing arrays 'a', 'b'".
std::string missingArraysMessage(llvm::StringRef source,
                                 llvm::ArrayRef<std::string> names);

/// Checks that `inputs` gives every argument of `signature` the step reads
/// (but the initial states) and nothing else: a misspelled or missing
/// array must not be generated in its place, and an array the model does
/// not know means the file is for another model. The cotangents (grad_ + a
/// result's name) belong to the model's training step, so a file may carry
/// them for inference too. `resetHint`: an unknown `*_reset` array is
/// refused with a hint that a preset takes reset states with --reset-to.
llvm::Error checkInputArrays(const npz::ArrayMap &inputs,
                             const Signature &signature, bool train,
                             llvm::StringRef source, bool resetHint);

/// The bytes of `arg` taken from `array` (the layer's slice of a stacked
/// per-layer array), its shape and dtype checked; a reset mask may be
/// bool or uint8, a dropout's rng int64 or uint64. `presetHint`: a float
/// array of the wrong type is refused with a hint at --dtype.
llvm::Error readArgument(const NamedTensor &arg, const npz::Array &array,
                         llvm::StringRef source, bool presetHint,
                         std::vector<char> &bytes);

/// How generateArgument draws values.
struct Generator {
  /// Seed of every array's stream (a stream depends on the seed, the
  /// array's name and layer, not on the order of the arguments).
  uint64_t seed = 0;
  /// Probability of is_init[t, b].
  double resetProb = 0.0;
  /// H: parameters are drawn from U(-1/sqrt(H), 1/sqrt(H)).
  int64_t hiddenSize = 1;
};

/// Generated values of `arg`: weights and biases ~ U(-1/sqrt(H), 1/sqrt(H))
/// as PyTorch initializes them, initial states ~ U(-0.5, 0.5), any other
/// float ~ U(-1, 1); a bool mask is Bernoulli(resetProb); a dropout's `rng`
/// is [seed, 0]. Any other i64 argument is an error: it must be given.
llvm::Error generateArgument(const NamedTensor &arg, const Generator &gen,
                             std::vector<char> &bytes);

/// The result arrays: `values[i]` holds result i's bytes; the layers of a
/// stacked name are gathered into one [L, ...] array, in the order the
/// names first appear.
std::vector<npz::Array>
gatherResults(const Signature &signature,
              const std::vector<std::vector<char>> &values);

} // namespace driver
} // namespace rnn

#endif // RNN_DRIVER_ARRAYIO_H
