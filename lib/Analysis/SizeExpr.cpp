//===- SizeExpr.cpp - sizes in a call's sequence length and batch ---------===//
//
// Implements SizeExpr.h.
//
//===----------------------------------------------------------------------===//

#include "rnn/Analysis/SizeExpr.h"

#include "rnn/Dialect/RNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/Support/MathExtras.h"

#include <array>

using namespace mlir;
using namespace mlir::rnn;

/// A term's exponents in the order of the symbols (T, B, P, K, N).
static std::array<unsigned, 5> exponents(const SizeExpr::Term &term) {
  return {term.t, term.b, term.p, term.k, term.n};
}

CallShape SizeSymbols::at(int64_t seqLen, int64_t batch) const {
  CallShape call{seqLen, batch};
  if (rows)
    call.P = gemmBlockSteps(seqLen, batch, *rows);
  if (chunk) {
    call.K = chunkStepsFor(seqLen, call.P, *chunk);
    call.N = seqLen / call.K + (seqLen % call.K != 0);
  }
  return call;
}

SizeExpr SizeExpr::constant(int64_t value) {
  SizeExpr e;
  e.terms.push_back({value});
  e.normalize();
  return e;
}

SizeExpr SizeExpr::monomial(Term term) {
  SizeExpr e;
  e.terms.push_back(term);
  return e;
}

void SizeExpr::normalize() {
  // Highest degree first; then T before B before P before K before N.
  llvm::sort(terms, [&](const Term &x, const Term &y) {
    if (x.degree() != y.degree())
      return x.degree() > y.degree();
    return exponents(x) > exponents(y);
  });
  SmallVector<Term, 4> merged;
  for (const Term &term : terms) {
    if (!merged.empty() && merged.back().sameMonomial(term))
      merged.back().coefficient += term.coefficient;
    else
      merged.push_back(term);
  }
  llvm::erase_if(merged, [](const Term &t) { return t.coefficient == 0; });
  terms = std::move(merged);
}

SizeExpr SizeExpr::operator+(const SizeExpr &other) const {
  SizeExpr sum = *this;
  llvm::append_range(sum.terms, other.terms);
  sum.normalize();
  return sum;
}

SizeExpr SizeExpr::operator-(const SizeExpr &other) const {
  SizeExpr difference = *this;
  for (Term term : other.terms) {
    term.coefficient = -term.coefficient;
    difference.terms.push_back(term);
  }
  difference.normalize();
  return difference;
}

SizeExpr SizeExpr::operator*(const SizeExpr &other) const {
  SizeExpr product;
  for (const Term &x : terms)
    for (const Term &y : other.terms)
      product.terms.push_back({x.coefficient * y.coefficient, x.t + y.t,
                               x.b + y.b, x.p + y.p, x.k + y.k, x.n + y.n});
  product.normalize();
  return product;
}

std::optional<int64_t> SizeExpr::getConstant() const {
  if (terms.empty())
    return 0;
  if (terms.size() == 1 && terms[0].degree() == 0)
    return terms[0].coefficient;
  return std::nullopt;
}

std::optional<int64_t> SizeExpr::evaluate(const CallShape &shape) const {
  int64_t total = 0;
  for (const Term &term : terms) {
    int64_t value = term.coefficient;
    std::array<int64_t, 5> bases = {shape.T, shape.B, shape.P, shape.K,
                                    shape.N};
    for (auto [power, base] : llvm::zip(exponents(term), bases))
      for (unsigned i = 0; i < power; ++i)
        if (llvm::MulOverflow(value, base, value))
          return std::nullopt;
    if (llvm::AddOverflow(total, value, total))
      return std::nullopt;
  }
  return total;
}

bool SizeExpr::isAtMost(const SizeExpr &other) const {
  return llvm::all_of((other - *this).terms,
                      [](const Term &t) { return t.coefficient >= 0; });
}

std::string SizeExpr::str() const {
  if (terms.empty())
    return "0";
  std::string s;
  for (const Term &term : terms) {
    int64_t coefficient = term.coefficient;
    if (!s.empty()) {
      s += coefficient < 0 ? " - " : " + ";
      coefficient = coefficient < 0 ? -coefficient : coefficient;
    }
    std::string monomial;
    std::array<const char *, 5> names = {"T", "B", "P", "K", "N"};
    for (auto [power, name] : llvm::zip(exponents(term), names))
      for (unsigned i = 0; i < power; ++i)
        monomial += std::string(monomial.empty() ? "" : "*") + name;
    if (monomial.empty())
      s += std::to_string(coefficient);
    else if (coefficient == 1)
      s += monomial;
    else
      s += std::to_string(coefficient) + "*" + monomial;
  }
  return s;
}

std::optional<char> mlir::rnn::argumentSymbol(BlockArgument arg,
                                               int64_t dim) {
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto type = dyn_cast<ShapedType>(arg.getType());
  // Sequences [T, B, X], is_init [T, B] and states [B, H]: model values
  // of rank 2 or 3.
  if (!func || !type || !type.hasRank() || type.getRank() < 2 ||
      type.getRank() > 3 || dim < 0 || dim >= type.getRank() ||
      !type.isDynamicDim(dim))
    return std::nullopt;
  auto name = func.getArgAttrOfType<StringAttr>(
      arg.getArgNumber(), RNNDialect::NameAttrHelper::getNameStr());
  bool startsWithT =
      type.getRank() == 3 || (name && name.getValue() == kRoleIsInit);
  if (startsWithT && dim == 0)
    return 'T';
  if (dim == (startsWithT ? 1 : 0))
    return 'B';
  return std::nullopt;
}

/// The symbol dimension `dim` of function argument `arg` stands for.
static std::optional<SizeExpr> argumentDim(BlockArgument arg, int64_t dim) {
  std::optional<char> symbol = argumentSymbol(arg, dim);
  if (!symbol)
    return std::nullopt;
  return *symbol == 'T' ? SizeExpr::symbolT() : SizeExpr::symbolB();
}

/// K and N (`k`, `n`) of a chunk of `chunk` steps asked for, at T = `t`
/// in GEMM blocks of P = `p`, at the builder's position.
static void buildChunk(OpBuilder &builder, Location loc, Value t, Value p,
                       int64_t chunk, Value &k, Value &n) {
  k = ChunkStepsOp::create(builder, loc, builder.getIndexType(), t, p,
                           builder.getI64IntegerAttr(chunk));
  n = arith::CeilDivUIOp::create(builder, loc, t, k);
}

std::optional<ShapeValues>
mlir::rnn::buildShapeValues(OpBuilder &builder, func::FuncOp func,
                            const SizeSymbols &symbols) {
  std::optional<int64_t> rows = symbols.rows;
  ShapeValues shape;
  Location loc = func.getLoc();
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type)
      continue;
    for (int64_t dim = 0; dim < type.getRank(); ++dim) {
      std::optional<char> symbol = argumentSymbol(arg, dim);
      Value &value = symbol == 'T' ? shape.T : shape.B;
      if (!symbol || value)
        continue;
      value = memref::DimOp::create(builder, loc, arg, dim);
    }
  }
  // A function with B only (every sequence given per step elsewhere) has
  // no T to read.
  if (!shape.B)
    return std::nullopt;
  shape.P = arith::ConstantIndexOp::create(builder, loc, 1);
  if (rows) {
    if (!shape.T)
      return std::nullopt;
    shape.P = BlockStepsOp::create(builder, loc, builder.getIndexType(),
                                   shape.T, shape.B,
                                   builder.getI64IntegerAttr(*rows));
  }
  if (symbols.chunk) {
    if (!shape.T)
      return std::nullopt;
    buildChunk(builder, loc, shape.T, shape.P, *symbols.chunk, shape.K,
               shape.N);
  }
  return shape;
}

Value SizeExpr::build(OpBuilder &builder, Location loc,
                      const ShapeValues &shape) const {
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, value);
  };
  Value sum;
  for (const Term &term : terms) {
    Value value;
    std::array<Value, 5> bases = {shape.T, shape.B, shape.P, shape.K,
                                  shape.N};
    for (auto [power, base] : llvm::zip(exponents(term), bases))
      for (unsigned i = 0; i < power; ++i)
        // A size reads only the symbols of the function's arguments.
        value = (assert(base && "a symbol the function has no value of"),
                 value)
                    ? arith::MulIOp::create(builder, loc, value, base)
                            .getResult()
                      : base;
    Value coefficient = index(term.coefficient);
    value = value ? arith::MulIOp::create(builder, loc, coefficient, value)
                        .getResult()
                  : coefficient;
    sum = sum ? arith::AddIOp::create(builder, loc, sum, value).getResult()
              : value;
  }
  return sum ? sum : index(0);
}

std::optional<SizeExpr> SizeExpr::ofIndex(Value value,
                                          SizeSymbols &symbols) {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return SizeExpr::constant(constant.getSExtValue());
  Operation *def = value.getDefiningOp();
  if (!def)
    return std::nullopt;
  auto binary = [&](Value lhs, Value rhs, bool product)
      -> std::optional<SizeExpr> {
    std::optional<SizeExpr> l = ofIndex(lhs, symbols);
    std::optional<SizeExpr> r = l ? ofIndex(rhs, symbols) : std::nullopt;
    if (!r)
      return std::nullopt;
    return product ? *l * *r : *l + *r;
  };
  if (auto mul = dyn_cast<arith::MulIOp>(def))
    return binary(mul.getLhs(), mul.getRhs(), /*product=*/true);
  if (auto add = dyn_cast<arith::AddIOp>(def))
    return binary(add.getLhs(), add.getRhs(), /*product=*/false);
  if (auto block = dyn_cast<BlockStepsOp>(def)) {
    // P is one symbol: every block of the function aims for the same rows
    // from the same T and B.
    SizeSymbols inner;
    std::optional<SizeExpr> t = ofIndex(block.getSteps(), inner);
    std::optional<SizeExpr> b = ofIndex(block.getBatch(), inner);
    auto rows = static_cast<int64_t>(block.getRows());
    if (!t || !b || *t != symbolT() || *b != symbolB() ||
        (symbols.rows && *symbols.rows != rows))
      return std::nullopt;
    symbols.rows = rows;
    return symbolP();
  }
  if (auto chunk = dyn_cast<ChunkStepsOp>(def)) {
    // K is one symbol: every chunk of the function is the same chunk of
    // the same T in the same blocks.
    std::optional<SizeExpr> t = ofIndex(chunk.getSteps(), symbols);
    std::optional<SizeExpr> p = ofIndex(chunk.getBlock(), symbols);
    auto steps = static_cast<int64_t>(chunk.getChunk());
    if (!t || !p || *t != symbolT() || *p != symbolP() ||
        (symbols.chunk && *symbols.chunk != steps))
      return std::nullopt;
    symbols.chunk = steps;
    return symbolK();
  }
  if (auto count = dyn_cast<arith::CeilDivUIOp>(def)) {
    // N, the chunks of T: ceil(T / K).
    std::optional<SizeExpr> t = ofIndex(count.getLhs(), symbols);
    std::optional<SizeExpr> k = ofIndex(count.getRhs(), symbols);
    if (!t || !k || *t != symbolT() || *k != symbolK())
      return std::nullopt;
    return symbolN();
  }
  if (auto dim = dyn_cast<memref::DimOp>(def)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!index)
      return std::nullopt;
    Value source = dim.getSource();
    if (auto arg = dyn_cast<BlockArgument>(source))
      return argumentDim(arg, *index);
    if (auto alloc = source.getDefiningOp<memref::AllocOp>()) {
      auto type = alloc.getType();
      if (!type.isDynamicDim(*index))
        return SizeExpr::constant(type.getDimSize(*index));
      return ofIndex(alloc.getDynamicSizes()[type.getDynamicDimIndex(*index)],
                     symbols);
    }
  }
  return std::nullopt;
}

std::optional<SizeExpr> SizeExpr::bytesOf(MemRefType type, ValueRange sizes,
                                          const DataLayout &layout,
                                          SizeSymbols &symbols) {
  if (!type.getLayout().isIdentity())
    return std::nullopt;
  Type element = type.getElementType();
  if (!isa<IntegerType, IndexType, FloatType, ComplexType, VectorType>(element))
    return std::nullopt;
  llvm::TypeSize elementSize = layout.getTypeSize(element);
  if (elementSize.isScalable())
    return std::nullopt;
  SizeExpr bytes =
      constant(static_cast<int64_t>(elementSize.getFixedValue()));
  unsigned next = 0;
  for (int64_t size : type.getShape()) {
    if (!ShapedType::isDynamic(size)) {
      bytes = bytes * constant(size);
      continue;
    }
    if (next >= sizes.size())
      return std::nullopt;
    std::optional<SizeExpr> dynamic = ofIndex(sizes[next++], symbols);
    if (!dynamic)
      return std::nullopt;
    bytes = bytes * *dynamic;
  }
  return bytes;
}

namespace {
/// i64 arithmetic on non-negative values that records, in `overflow`,
/// whether a result left [0, 2^63).
struct CheckedArithmetic {
  OpBuilder &b;
  Location loc;
  Value overflow;

  Value constant(int64_t value) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), value);
  }
  void flag(Value condition) {
    overflow = arith::OrIOp::create(b, loc, overflow, condition);
  }
  Value negative(Value value) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, value,
                                 constant(0));
  }
  Value mul(Value lhs, Value rhs) {
    auto product = arith::MulUIExtendedOp::create(b, loc, lhs, rhs);
    flag(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                               product.getHigh(), constant(0)));
    flag(negative(product.getLow()));
    return product.getLow();
  }
  Value add(Value lhs, Value rhs) {
    auto sum = arith::AddUIExtendedOp::create(b, loc, lhs, rhs);
    flag(sum.getOverflow());
    flag(negative(sum.getSum()));
    return sum.getSum();
  }
};
} // namespace

Value SizeExpr::buildChecked(OpBuilder &builder, Location loc,
                             ArrayRef<Value> symbols, Value &overflow) const {
  CheckedArithmetic c{builder, loc, overflow};
  Value sum = c.constant(0);
  for (const Term &term : terms) {
    Value value = c.constant(term.coefficient);
    for (auto [power, symbol] : llvm::zip(exponents(term), symbols))
      for (unsigned i = 0; i < power; ++i)
        value = c.mul(value, symbol);
    sum = c.add(sum, value);
  }
  overflow = c.overflow;
  return sum;
}

std::array<Value, 5> mlir::rnn::buildCallSymbols(OpBuilder &builder,
                                                  Location loc, Value t,
                                                  Value b,
                                                  const SizeSymbols &symbols) {
  Type index = builder.getIndexType(), i64 = builder.getI64Type();
  auto toI64 = [&](Value value) -> Value {
    return arith::IndexCastUIOp::create(builder, loc, i64, value);
  };
  Value p = symbols.rows
                ? BlockStepsOp::create(builder, loc, index, t, b,
                                       builder.getI64IntegerAttr(*symbols.rows))
                      .getResult()
                : arith::ConstantIndexOp::create(builder, loc, 1).getResult();
  std::array<Value, 5> values = {toI64(t), toI64(b), toI64(p), Value(),
                                 Value()};
  if (symbols.chunk) {
    Value k, n;
    buildChunk(builder, loc, t, p, *symbols.chunk, k, n);
    values[3] = toI64(k);
    values[4] = toI64(n);
  }
  return values;
}

bool mlir::rnn::isSizeFunction(func::FuncOp func) {
  Builder b(func.getContext());
  return func.getFunctionType() ==
         b.getFunctionType({b.getIndexType(), b.getIndexType()},
                           {b.getI64Type()});
}

func::FuncOp mlir::rnn::buildSizeFunction(
    OpBuilder &builder, Operation *after, StringRef name,
    ArrayRef<std::pair<SizeExpr, int64_t>> parts, int64_t alignment,
    const SizeSymbols &sizeSymbols) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointAfter(after);
  Location loc = after->getLoc();
  Type index = builder.getIndexType(), i64 = builder.getI64Type();
  auto func = func::FuncOp::create(
      builder, loc, name, builder.getFunctionType({index, index}, {i64}));
  func.setPrivate();
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  CheckedArithmetic c{builder, loc,
                      arith::ConstantIntOp::create(builder, loc,
                                                   builder.getI1Type(), 0)};
  std::array<Value, 5> symbols = buildCallSymbols(
      builder, loc, body->getArgument(0), body->getArgument(1), sizeSymbols);
  Value total = c.constant(0);
  for (const auto &[size, count] : parts) {
    Value sum = size.buildChecked(builder, loc, symbols, c.overflow);
    if (alignment > 1) {
      // (sum + alignment - 1) / alignment * alignment
      Value rounded = c.add(sum, c.constant(alignment - 1));
      sum = arith::MulIOp::create(
          builder, loc,
          arith::DivUIOp::create(builder, loc, rounded, c.constant(alignment)),
          c.constant(alignment));
    }
    total = c.add(total, c.mul(sum, c.constant(count)));
  }
  Value result = arith::SelectOp::create(builder, loc, c.overflow,
                                         c.constant(-1), total);
  func::ReturnOp::create(builder, loc, result);
  return func;
}

void SizeMax::add(const SizeExpr &size) {
  for (const SizeExpr &candidate : candidates)
    if (size.isAtMost(candidate))
      return;
  llvm::erase_if(candidates, [&](const SizeExpr &candidate) {
    return candidate.isAtMost(size);
  });
  candidates.push_back(size);
}

std::optional<int64_t> SizeMax::evaluate(const CallShape &shape) const {
  int64_t largest = 0;
  for (const SizeExpr &candidate : candidates) {
    std::optional<int64_t> value = candidate.evaluate(shape);
    if (!value)
      return std::nullopt;
    largest = std::max(largest, *value);
  }
  return largest;
}

std::string SizeMax::str() const {
  if (candidates.empty())
    return "0";
  if (candidates.size() == 1)
    return candidates.front().str();
  std::string s = "max(";
  for (auto [i, candidate] : llvm::enumerate(candidates))
    s += (i ? ", " : "") + candidate.str();
  return s + ")";
}

Value SizeMax::buildChecked(OpBuilder &builder, Location loc,
                            ArrayRef<Value> symbols, Value &overflow) const {
  Value largest =
      arith::ConstantIntOp::create(builder, loc, builder.getI64Type(), 0);
  for (const SizeExpr &candidate : candidates)
    largest = arith::MaxSIOp::create(
        builder, loc, largest,
        candidate.buildChecked(builder, loc, symbols, overflow));
  return largest;
}

ArrayAttr SizeMax::toAttr(Builder &builder) const {
  SmallVector<Attribute> attrs;
  for (const SizeExpr &candidate : candidates) {
    SmallVector<int64_t> words;
    for (const SizeExpr::Term &term : candidate.getTerms()) {
      words.push_back(term.coefficient);
      for (unsigned power : exponents(term))
        words.push_back(power);
    }
    attrs.push_back(builder.getDenseI64ArrayAttr(words));
  }
  return builder.getArrayAttr(attrs);
}

std::optional<SizeMax> SizeMax::fromAttr(Attribute attr) {
  auto array = dyn_cast_or_null<ArrayAttr>(attr);
  if (!array)
    return std::nullopt;
  SizeMax max;
  for (Attribute element : array) {
    auto words = dyn_cast<DenseI64ArrayAttr>(element);
    if (!words || words.size() % 6 != 0)
      return std::nullopt;
    SizeExpr candidate;
    for (size_t i = 0; i < static_cast<size_t>(words.size()); i += 6) {
      if (llvm::any_of(words.asArrayRef().slice(i + 1, 5),
                       [](int64_t power) { return power < 0 || power > 8; }))
        return std::nullopt;
      SizeExpr term = SizeExpr::constant(words[i]);
      SizeExpr bases[] = {SizeExpr::symbolT(), SizeExpr::symbolB(),
                          SizeExpr::symbolP(), SizeExpr::symbolK(),
                          SizeExpr::symbolN()};
      for (unsigned j = 0; j < 5; ++j)
        for (int64_t k = 0; k < words[i + 1 + j]; ++k)
          term = term * bases[j];
      candidate = candidate + term;
    }
    max.add(candidate);
  }
  return max;
}
