//===- MatmulToBLAS.cpp - rnn-matmul-to-blas ------------------------------===//
//
// Replaces f32 linalg.matmul on memrefs by a call to the runtime's
// `rnnrt_sgemm`, which runs a tuned BLAS (OpenBLAS on the CPU), or to the
// callee the `callee` option names (`rnnrt_cuda_sgemm` for the GPU, same
// signature, device pointers in the descriptors), f64 ones by a call to
// `callee-f64` (`rnnrt_dgemm`; none on a target without one, where an f64
// product is an error), and those of bf16 operands into f32 by a call to
// `callee-bf16` (`rnnrt_cuda_gemm_bf16`; none by default). The kernels
// express every GEMM as linalg.matmul with the transpositions in its
// indexing maps, so the same IR can instead be tiled by upstream linalg
// transforms; this pass is the fast path for a target that has a BLAS.
//
// The callee takes fully dynamic strided memrefs through the C interface,
// so one declaration serves every shape and view.
//
//===----------------------------------------------------------------------===//

#include "rnn/Conversion/Passes.h"
#include "rnn/Conversion/RuntimeFunctions.h"
#include "rnn/Support/Diagnostics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

namespace mlir {
namespace rnn {
#define GEN_PASS_DEF_MATMULTOBLASPASS
#include "rnn/Conversion/Passes.h.inc"
} // namespace rnn
} // namespace mlir

using namespace mlir;

/// The memref type every matrix of `element` is cast to before the call.
static MemRefType dynamicMatrixType(Type element) {
  MLIRContext *ctx = element.getContext();
  int64_t dyn = ShapedType::kDynamic;
  return MemRefType::get(
      {dyn, dyn}, element,
      StridedLayoutAttr::get(ctx, /*offset=*/dyn, /*strides=*/{dyn, dyn}));
}

/// The element types of one GEMM callee: A and B of `operands`, C (and
/// alpha, beta) of `result`.
struct GemmTypes {
  Type operands, result;
};

/// The callee's type: (transA, transB, alpha, beta, A, B, C).
static FunctionType calleeType(GemmTypes types) {
  MLIRContext *ctx = types.result.getContext();
  Type i64 = IntegerType::get(ctx, 64);
  MemRefType operand = dynamicMatrixType(types.operands);
  MemRefType result = dynamicMatrixType(types.result);
  return FunctionType::get(
      ctx, {i64, i64, types.result, types.result, operand, operand, result},
      {});
}

/// Reads whether operand `which` (0 = A, 1 = B) is transposed from the
/// indexing maps (m, n, k) of a matmul; failure if the map is not a plain
/// or transposed matrix access.
static FailureOr<bool> isTransposed(linalg::MatmulOp op, unsigned which) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *ctx = op.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  AffineExpr rows = which == 0 ? m : k, cols = which == 0 ? k : n;
  AffineMap plain = AffineMap::get(3, 0, {rows, cols}, ctx);
  AffineMap transposed = AffineMap::get(3, 0, {cols, rows}, ctx);
  if (maps[which] == plain)
    return false;
  if (maps[which] == transposed)
    return true;
  return failure();
}

namespace {
struct MatmulToCall : public OpRewritePattern<linalg::MatmulOp> {
  /// Rewrites the products of `types` into calls to `callee`.
  MatmulToCall(MLIRContext *ctx, GemmTypes types, StringRef callee)
      : OpRewritePattern(ctx), types(types), callee(callee.str()) {}

  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureBufferSemantics())
      return rewriter.notifyMatchFailure(op, "not on buffers");
    Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1],
          c = op.getDpsInits()[0];
    auto elementOf = [](Value v) {
      return cast<MemRefType>(v.getType()).getElementType();
    };
    if (elementOf(a) != types.operands || elementOf(b) != types.operands ||
        elementOf(c) != types.result)
      return rewriter.notifyMatchFailure(op, "other element types");
    FailureOr<bool> transA = isTransposed(op, 0);
    FailureOr<bool> transB = isTransposed(op, 1);
    MLIRContext *ctx = op.getContext();
    AffineExpr m, n, k;
    bindDims(ctx, m, n, k);
    if (failed(transA) || failed(transB) ||
        op.getIndexingMapsArray()[2] != AffineMap::get(3, 0, {m, n}, ctx))
      return rewriter.notifyMatchFailure(op, "not a matrix product");

    // A zero fill of C right before the product becomes beta = 0.
    double beta = 1.0;
    if (auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode())) {
      FloatAttr value;
      if (fill.getDpsInits()[0] == c &&
          matchPattern(fill.getDpsInputs()[0], m_Constant(&value)) &&
          value.getValue().isZero()) {
        beta = 0.0;
        rewriter.eraseOp(fill);
      }
    }

    Location loc = op.getLoc();
    auto flag = [&](bool value) -> Value {
      return arith::ConstantIntOp::create(rewriter, loc, rewriter.getI64Type(),
                                          value);
    };
    auto scalar = [&](double value) -> Value {
      return arith::ConstantOp::create(
          rewriter, loc, rewriter.getFloatAttr(types.result, value));
    };
    SmallVector<Value> args = {flag(*transA), flag(*transB), scalar(1.0),
                               scalar(beta)};
    for (Value v : {a, b, c})
      args.push_back(memref::CastOp::create(
          rewriter, loc, dynamicMatrixType(elementOf(v)), v));
    rewriter.replaceOpWithNewOp<func::CallOp>(op, callee, TypeRange{}, args);
    return success();
  }

private:
  GemmTypes types;
  std::string callee;
};

struct MatmulToBLASPass
    : public rnn::impl::MatmulToBLASPassBase<MatmulToBLASPass> {
  using MatmulToBLASPassBase::MatmulToBLASPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // The callees are the runtime's C functions. callee-f64 and callee-bf16
    // may be empty (the target has no such GEMM); callee may not.
    for (auto [option, name, optional] :
         {std::make_tuple("callee", StringRef(callee), false),
          std::make_tuple("callee-f64", StringRef(calleeF64), true),
          std::make_tuple("callee-bf16", StringRef(calleeBF16), true)}) {
      if (rnn::isCIdentifier(name) || (optional && name.empty()))
        continue;
      rnn::emitErrorAt(module, "rnn-matmul-to-blas: ")
          << option << " '" << name
          << "' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)"
          << (optional ? "; empty: the target has no such GEMM" : "");
      return signalPassFailure();
    }
    // Each callee has a type of its own (the element types of A, B and C):
    // one symbol cannot be two of them.
    for (auto [option, name, other, otherName] :
         {std::make_tuple("callee-f64", StringRef(calleeF64), "callee",
                          StringRef(callee)),
          std::make_tuple("callee-bf16", StringRef(calleeBF16), "callee",
                          StringRef(callee)),
          std::make_tuple("callee-bf16", StringRef(calleeBF16), "callee-f64",
                          StringRef(calleeF64))}) {
      if (name.empty() || name != otherName)
        continue;
      rnn::emitErrorAt(module, "rnn-matmul-to-blas: ")
          << option << " '" << name << "' is also " << other
          << ": each GEMM callee has a type of its own";
      return signalPassFailure();
    }
    Type f32 = Float32Type::get(ctx), f64 = Float64Type::get(ctx),
         bf16 = BFloat16Type::get(ctx);
    SmallVector<std::pair<GemmTypes, std::string>> callees = {
        {{f32, f32}, callee}};
    if (!calleeF64.empty())
      callees.push_back({{f64, f64}, calleeF64});
    if (!calleeBF16.empty())
      callees.push_back({{bf16, f32}, calleeBF16});
    RewritePatternSet patterns(ctx);
    for (auto &[types, name] : callees)
      patterns.add<MatmulToCall>(ctx, types, name);
    walkAndApplyPatterns(module, std::move(patterns));

    // The products a target has no GEMM for.
    WalkResult left = module.walk([&](linalg::MatmulOp op) {
      if (!op.hasPureBufferSemantics())
        return WalkResult::advance();
      Type element =
          cast<MemRefType>(op.getDpsInputs()[0].getType()).getElementType();
      if (element == f64 && calleeF64.empty()) {
        op.emitError("rnn-matmul-to-blas: the target has no f64 GEMM "
                     "(no callee-f64)");
        return WalkResult::interrupt();
      }
      if (element == bf16 && calleeBF16.empty()) {
        op.emitError("rnn-matmul-to-blas: the target has no bf16 GEMM "
                     "(no callee-bf16)");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (left.wasInterrupted())
      return signalPassFailure();
    llvm::StringSet<> called;
    module.walk([&](func::CallOp call) { called.insert(call.getCallee()); });
    for (auto &[types, name] : callees)
      if ((called.contains(name) || module.lookupSymbol(name)) &&
          failed(declare(module, name, calleeType(types))))
        return signalPassFailure();
  }

  /// Declares `name` of `type`, with the C interface the runtime's GEMM
  /// entry points have (the module calls or declares it).
  LogicalResult declare(ModuleOp module, StringRef name, FunctionType type) {
    FailureOr<func::FuncOp> function =
        rnn::declareRuntimeFunction(module, name, type, "rnn-matmul-to-blas");
    if (failed(function))
      return failure();
    (*function)->setAttr("llvm.emit_c_interface",
                         UnitAttr::get(module.getContext()));
    return success();
  }
};
} // namespace
