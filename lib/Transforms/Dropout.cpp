//===- Dropout.cpp - rnn.dropout's mask as a linalg.generic ---------------===//
//
// Implements applyDropout (ForwardKernels.h): one elementwise
// linalg.generic that computes each element's Philox4x32-10 word from its
// position and the runtime [seed, offset] and keeps or drops the element,
// so that the mask is regenerated wherever it is needed and never stored.
// Upstream has no counter-based generator (the random ops of other
// dialects draw from a state), so the rounds are emitted here with
// arith.mului_extended, which both targets lower.
//
//===----------------------------------------------------------------------===//

#include "ForwardKernels.h"

#include "rnn/Dialect/RNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::rnn;

namespace {
/// Emits Philox4x32-10 (Random123's philox4x32_R with R = 10) on i32
/// values.
struct PhiloxEmitter {
  OpBuilder &b;
  Location loc;

  Value i32(uint32_t value) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(value));
  }

  /// The four output words of counter `c` under key `k`.
  SmallVector<Value, 4> run(SmallVector<Value, 4> c, Value k0, Value k1) {
    for (int round = 0; round < 10; ++round) {
      if (round) {
        k0 = arith::AddIOp::create(b, loc, k0, i32(0x9E3779B9u));
        k1 = arith::AddIOp::create(b, loc, k1, i32(0xBB67AE85u));
      }
      auto p0 = arith::MulUIExtendedOp::create(b, loc, i32(0xD2511F53u), c[0]);
      auto p1 = arith::MulUIExtendedOp::create(b, loc, i32(0xCD9E8D57u), c[2]);
      Value x0 = arith::XOrIOp::create(
          b, loc, arith::XOrIOp::create(b, loc, p1.getHigh(), c[1]), k0);
      Value x2 = arith::XOrIOp::create(
          b, loc, arith::XOrIOp::create(b, loc, p0.getHigh(), c[3]), k1);
      c = {x0, p1.getLow(), x2, p0.getLow()};
    }
    return c;
  }
};
} // namespace

Value mlir::rnn::applyDropout(OpBuilder &builder, DropoutOp op, Value input,
                              Value rng) {
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(input.getType());
  double p = op.getP().convertToDouble();
  if (p == 0.0)
    return input;
  int64_t hidden = type.getDimSize(2);
  uint64_t threshold = op.getThreshold();
  int64_t layer = op.getLayer();
  Type element = type.getElementType();
  double scale = 1.0 / (1.0 - p);

  MLIRContext *ctx = builder.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(3, ctx);
  auto word = [&](int64_t i) {
    return AffineMap::get(3, 0, getAffineConstantExpr(i, ctx));
  };
  Value init = createEmptyLike(builder, loc, input);
  // A dynamic B as the element numbering reads it (a constant B is made
  // in the body).
  Value dynamicBatch;
  if (type.isDynamicDim(1))
    dynamicBatch = arith::IndexCastUIOp::create(
        builder, loc, builder.getI64Type(),
        tensor::DimOp::create(builder, loc, input, 1));
  auto generic = linalg::GenericOp::create(
      builder, loc, type, ValueRange{input, rng, rng}, ValueRange{init},
      ArrayRef<AffineMap>{identity, word(0), word(1), identity},
      SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel),
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Type i64 = b.getI64Type(), i32 = b.getI32Type();
        auto i64Const = [&](int64_t v) -> Value {
          return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
        };
        auto index = [&](unsigned dim) -> Value {
          return arith::IndexCastUIOp::create(
              b, loc, i64, linalg::IndexOp::create(b, loc, dim));
        };
        auto low = [&](Value v) -> Value {
          return arith::TruncIOp::create(b, loc, i32, v);
        };
        auto high = [&](Value v) -> Value {
          return low(arith::ShRUIOp::create(b, loc, v, i64Const(32)));
        };
        // n = (t * B + b) * H + h.
        Value n = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(
                b, loc,
                arith::AddIOp::create(
                    b, loc,
                    arith::MulIOp::create(
                        b, loc, index(0),
                        dynamicBatch ? dynamicBatch
                                     : i64Const(type.getDimSize(1))),
                    index(1)),
                i64Const(hidden)),
            index(2));
        Value seed = args[1], offset = args[2];
        PhiloxEmitter philox{b, loc};
        SmallVector<Value, 4> counter = {
            low(arith::ShRUIOp::create(b, loc, n, i64Const(2))),
            philox.i32(static_cast<uint32_t>(layer)), low(offset),
            high(offset)};
        SmallVector<Value, 4> words =
            philox.run(counter, low(seed), high(seed));
        // Word n mod 4 of the four.
        Value which = arith::AndIOp::create(b, loc, n, i64Const(3));
        Value chosen = words[3];
        for (int i = 2; i >= 0; --i) {
          Value isI = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                            which, i64Const(i));
          chosen = arith::SelectOp::create(b, loc, isI, words[i], chosen);
        }
        Value keep =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                  arith::ExtUIOp::create(b, loc, i64, chosen),
                                  i64Const(static_cast<int64_t>(threshold)));
        Value scaled = arith::MulFOp::create(
            b, loc, args[0],
            arith::ConstantOp::create(b, loc, b.getFloatAttr(element, scale)));
        Value zero =
            arith::ConstantOp::create(b, loc, b.getFloatAttr(element, 0.0));
        linalg::YieldOp::create(
            b, loc,
            ValueRange{arith::SelectOp::create(b, loc, keep, scaled, zero)});
      });
  return generic.getResult(0);
}
