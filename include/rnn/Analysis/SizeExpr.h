//===- SizeExpr.h - sizes in a call's sequence length and batch -*- C++ -*-===//
//
// A size that a program compiled for every sequence length T and batch
// size B knows only when it is called: a polynomial with integer
// coefficients in T, B, P, the GEMM block of the call (rnn.block_steps,
// itself a function of T and B), and under chunk:K, K, the steps of the
// call's chunk (rnn.chunk_steps, a function of T and P), and N, the
// number of its chunks, ceil(T / K). Every buffer of the rnn pipeline has such
// a size in bytes (x: T*B*I*4, a state: B*H*4, a block's projection:
// P*B*4H*4), so that the memory plan of a dynamic function is a set of
// expressions a caller evaluates per call. A static size is the constant
// term alone.
//
// `SizeExpr::ofIndex` reads an index value of the lowered IR as such an
// expression: constants, products and sums of them, `memref.dim` of a
// function argument (T or B, by the argument's role: dimension 0 of a
// sequence [T, B, X] or of is_init [T, B] is T, the next one B, and
// dimension 0 of a state [B, H] is B), `memref.dim` of an allocation (its
// size), `rnn.block_steps` (P), `rnn.chunk_steps` (K) and
// `arith.ceildivui` of T by K (N).
//
//===----------------------------------------------------------------------===//

#ifndef RNN_ANALYSIS_SIZEEXPR_H
#define RNN_ANALYSIS_SIZEEXPR_H

#include "mlir/IR/Value.h"
#include "mlir/IR/ValueRange.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace mlir {
class ArrayAttr;
class Attribute;
class Builder;
class Location;
class MemRefType;
class DataLayout;
class OpBuilder;
namespace func {
class FuncOp;
} // namespace func

namespace rnn {

/// The sizes a call gives a dynamic function: T, B, the GEMM block P
/// (gemmBlockSteps(T, B, rows)), and under a chunk the chunk K
/// (chunkStepsFor(T, P, chunk)) and the chunk count N = ceil(T / K).
struct CallShape {
  int64_t T = 1, B = 1, P = 1, K = 1, N = 1;
};

/// T, B, P, K and N as index values of the IR (T null in a function that
/// reads no T; K and N null without a chunk).
struct ShapeValues {
  Value T, B, P, K, N;
};

/// What a function's sizes read besides T and B: the rows of its GEMM
/// blocks (P) and the chunk asked for (K, N), each set by the first size
/// that reads it (every block and chunk of a function has the same).
struct SizeSymbols {
  std::optional<int64_t> rows, chunk;

  /// The shape of a call at (T, B).
  CallShape at(int64_t seqLen, int64_t batch) const;
};

/// The symbol, 'T' or 'B', that dimension `dim` of argument `arg` of a
/// func.func stands for by the argument's role (see above), if any.
std::optional<char> argumentSymbol(BlockArgument arg, int64_t dim);

/// T and B read from `func`'s arguments (memref.dim, at the builder's
/// position, of an argument dimension that is each), P of blocks of
/// `symbols.rows` rows from them if given (else 1), and K and N of a chunk
/// of `symbols.chunk` steps if given; nothing if no argument has T or B.
std::optional<ShapeValues> buildShapeValues(OpBuilder &builder,
                                            func::FuncOp func,
                                            const SizeSymbols &symbols);

class SizeExpr {
public:
  /// One term: coefficient * T^t * B^b * P^p * K^k * N^n.
  struct Term {
    int64_t coefficient = 0;
    unsigned t = 0, b = 0, p = 0, k = 0, n = 0;

    bool sameMonomial(const Term &other) const {
      return t == other.t && b == other.b && p == other.p && k == other.k &&
             n == other.n;
    }
    unsigned degree() const { return t + b + p + k + n; }
  };

  SizeExpr() = default;
  static SizeExpr constant(int64_t value);
  static SizeExpr symbolT() { return monomial({1, 1, 0, 0, 0, 0}); }
  static SizeExpr symbolB() { return monomial({1, 0, 1, 0, 0, 0}); }
  static SizeExpr symbolP() { return monomial({1, 0, 0, 1, 0, 0}); }
  static SizeExpr symbolK() { return monomial({1, 0, 0, 0, 1, 0}); }
  static SizeExpr symbolN() { return monomial({1, 0, 0, 0, 0, 1}); }

  /// The size `value` (an index) stands for, or nothing if it is not one
  /// the grammar above covers; `symbols` records the rows of an
  /// rnn.block_steps and the chunk of an rnn.chunk_steps it reads (each
  /// must agree with one already set).
  static std::optional<SizeExpr> ofIndex(Value value, SizeSymbols &symbols);
  /// The bytes of a buffer of `type` whose dynamic sizes are `sizes`, or
  /// nothing if one of them is not covered or the element has no size.
  static std::optional<SizeExpr> bytesOf(MemRefType type, ValueRange sizes,
                                         const DataLayout &layout,
                                         SizeSymbols &symbols);

  SizeExpr operator+(const SizeExpr &other) const;
  SizeExpr operator-(const SizeExpr &other) const;
  SizeExpr operator*(const SizeExpr &other) const;
  bool operator==(const SizeExpr &other) const {
    return terms.size() == other.terms.size() &&
           llvm::all_of(llvm::zip(terms, other.terms), [](auto pair) {
             auto &[a, b] = pair;
             return a.sameMonomial(b) && a.coefficient == b.coefficient;
           });
  }
  bool operator!=(const SizeExpr &other) const { return !(*this == other); }

  /// The terms, highest degree first; none for zero.
  llvm::ArrayRef<Term> getTerms() const { return terms; }
  /// The value of a constant expression.
  std::optional<int64_t> getConstant() const;
  /// The value at `shape`, or nothing if it overflows 64 bits.
  std::optional<int64_t> evaluate(const CallShape &shape) const;
  /// Whether this is at most `other` at every shape (T, B, P, K, N >= 1):
  /// each coefficient of the difference other - this is non-negative.
  bool isAtMost(const SizeExpr &other) const;

  /// "256*T*B + 1024*B*P + 128": terms highest degree first, the constant
  /// last; "0" for zero.
  std::string str() const;

  /// The value in the IR, from `shape`, at the builder's position (index
  /// arithmetic).
  Value build(OpBuilder &builder, Location loc,
              const ShapeValues &shape) const;
  /// The value as an i64 from `symbols` (T, B, P, K, N as i64; K and N
  /// may be null where no term reads them), in arithmetic that ors into
  /// `overflow` (an i1) whether a step left [0, 2^63).
  Value buildChecked(OpBuilder &builder, Location loc,
                     llvm::ArrayRef<Value> symbols, Value &overflow) const;

private:
  /// The single term `term`.
  static SizeExpr monomial(Term term);
  /// Merges terms of one monomial, drops zeros, orders them.
  void normalize();

  llvm::SmallVector<Term, 4> terms;
};

/// T, B, P, K and N as i64 values at the builder's position, from T and B
/// (index values): P of blocks of `symbols.rows` rows (else 1), and K and
/// N of a chunk of `symbols.chunk` steps (else null): the symbols
/// SizeExpr::buildChecked reads.
std::array<Value, 5> buildCallSymbols(OpBuilder &builder, Location loc,
                                      Value t, Value b,
                                      const SizeSymbols &symbols);

/// Whether `func` has the type of a size function, (index, index) -> i64.
bool isSizeFunction(func::FuncOp func);

/// Creates, after `after`, `func.func private @name(%T: index, %B: index)
/// -> i64`: the sum of `count` * `size` rounded up to a multiple of
/// `alignment`, over `parts`, at (T, B), P = gemmBlockSteps(T, B, rows)
/// (P = 1 without rows) and a chunk's K and N, or -1 where it (or a step
/// of it) does not fit in 63 bits.
func::FuncOp
buildSizeFunction(OpBuilder &builder, Operation *after, llvm::StringRef name,
                  llvm::ArrayRef<std::pair<SizeExpr, int64_t>> parts,
                  int64_t alignment, const SizeSymbols &symbols);

/// The larger of some sizes at every shape, as its candidates: none of
/// them at most another one (isAtMost).
class SizeMax {
public:
  /// Adds a candidate unless another is at least it, dropping those it is
  /// at least.
  void add(const SizeExpr &size);
  llvm::ArrayRef<SizeExpr> getCandidates() const { return candidates; }
  std::optional<int64_t> evaluate(const CallShape &shape) const;
  /// The candidate alone, or "max(a, b, ...)"; "0" without any.
  std::string str() const;
  /// The value in the IR as SizeExpr::buildChecked builds each candidate.
  Value buildChecked(OpBuilder &builder, Location loc,
                     llvm::ArrayRef<Value> symbols, Value &overflow) const;

  /// As an attribute: one array of i64 per candidate, six per term (the
  /// coefficient, then the powers of T, B, P, K and N).
  ArrayAttr toAttr(Builder &builder) const;
  /// The expression toAttr gives `attr` for, or nothing if it is none.
  static std::optional<SizeMax> fromAttr(Attribute attr);

private:
  llvm::SmallVector<SizeExpr, 2> candidates;
};

} // namespace rnn
} // namespace mlir

#endif // RNN_ANALYSIS_SIZEEXPR_H
