//===- RNNRoles.h - the roles of layer and kernel values -------*- C++ -*-===//
//
// A value of a layer or of one of its kernels is asked for by its role, the
// name PyTorch gives it (`x`, `weight_hh`, `grad_bias_ih`, ...), never by its
// position. The roles every cell has are these constants; the state roles
// are a cell's state names (CellAttrInterface::getStateNames) with the
// affixes below, and a cell's saved roles are its own (getSavedRoles).
//
//===----------------------------------------------------------------------===//

#ifndef RNN_DIALECT_RNNROLES_H
#define RNN_DIALECT_RNNROLES_H

#include "rnn/Dialect/RNNEnums.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace rnn {
/// The input sequence [T, B, I], the reset mask [T, B], the output
/// sequence [T, B, H].
inline constexpr llvm::StringLiteral kRoleX = "x", kRoleIsInit = "is_init",
                                     kRoleY = "y";
/// The weights [G H, I] and [G H, H] and the biases [G H].
inline constexpr llvm::StringLiteral kRoleWeightIh = "weight_ih",
                                     kRoleWeightHh = "weight_hh",
                                     kRoleBiasIh = "bias_ih",
                                     kRoleBiasHh = "bias_hh";
/// A state's roles: `<state>0` (initial), `<state>_n` (final),
/// `<state>_reset` (what a reset step enters).
inline constexpr llvm::StringLiteral kInitialStateSuffix = "0",
                                     kFinalStateSuffix = "_n",
                                     kResetStateSuffix = "_reset";
/// A dropout's key [seed, offset] (rnn.dropout's rng).
inline constexpr llvm::StringLiteral kRoleRng = "rng";
/// PyTorch's name of a layer's own array of `name` (a parameter, or a
/// state whose layers do not stack): `<name>_l<layer>`.
inline std::string perLayerName(llvm::StringRef name, int64_t layer) {
  return (name + "_l" + llvm::Twine(layer)).str();
}
/// The gradient or cotangent of role r is `grad_<r>`.
inline constexpr llvm::StringLiteral kGradPrefix = "grad_";
inline constexpr llvm::StringLiteral kRoleGradX = "grad_x",
                                     kRoleGradY = "grad_y",
                                     kRoleGradWeightIh = "grad_weight_ih",
                                     kRoleGradWeightHh = "grad_weight_hh",
                                     kRoleGradBiasIh = "grad_bias_ih",
                                     kRoleGradBiasHh = "grad_bias_hh";

/// The names of an entry point's buffers besides the roles above: the
/// saved region (forward to backward) and the scratch arena.
inline constexpr llvm::StringLiteral kBufferSaved = "saved",
                                     kBufferArena = "arena";

/// What an entry point does with an argument buffer (BufferRole,
/// RNNEnums.td, whose names are the manifest's `role`s), by the argument's
/// name (`rnn.name`). An entry point writes outputs, gradients, the saved
/// region (in the forward) and the arena (isWrittenRole); its caller may
/// pass overlapping buffers only where neither is written
/// (rnnrt_cuda_enter refuses others), which the cuda kernels' read-only
/// arguments rely on.
inline BufferRole bufferRole(llvm::StringRef name) {
  if (name == kBufferSaved)
    return BufferRole::Saved;
  if (name == kBufferArena)
    return BufferRole::Scratch;
  auto isOutput = [](llvm::StringRef n) {
    return n == kRoleY || n.ends_with(kFinalStateSuffix);
  };
  if (name.consume_front(kGradPrefix))
    return isOutput(name) ? BufferRole::Cotangent : BufferRole::Gradient;
  if (isOutput(name))
    return BufferRole::Output;
  if (name.starts_with("weight_") || name.starts_with("bias_"))
    return BufferRole::Parameter;
  return BufferRole::Input;
}

/// Whether an entry point may write a buffer of `role`. The backward reads
/// the saved region, but the forward writes it, and both count it here.
inline bool isWrittenRole(BufferRole role) {
  return role == BufferRole::Output || role == BufferRole::Gradient ||
         role == BufferRole::Saved || role == BufferRole::Scratch;
}
} // namespace rnn
} // namespace mlir

#endif // RNN_DIALECT_RNNROLES_H
