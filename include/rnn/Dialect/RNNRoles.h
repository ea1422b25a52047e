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

#include "llvm/ADT/StringRef.h"

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
/// The gradient or cotangent of role r is `grad_<r>`.
inline constexpr llvm::StringLiteral kGradPrefix = "grad_";
inline constexpr llvm::StringLiteral kRoleGradX = "grad_x",
                                     kRoleGradY = "grad_y",
                                     kRoleGradWeightIh = "grad_weight_ih",
                                     kRoleGradWeightHh = "grad_weight_hh",
                                     kRoleGradBiasIh = "grad_bias_ih",
                                     kRoleGradBiasHh = "grad_bias_hh";
} // namespace rnn
} // namespace mlir

#endif // RNN_DIALECT_RNNROLES_H
