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

using namespace mlir;
using namespace mlir::rnn;

SizeExpr SizeExpr::constant(int64_t value) {
  SizeExpr e;
  e.terms.push_back({value, 0, 0, 0});
  e.normalize();
  return e;
}

SizeExpr SizeExpr::symbolT() {
  SizeExpr e;
  e.terms.push_back({1, 1, 0, 0});
  return e;
}

SizeExpr SizeExpr::symbolB() {
  SizeExpr e;
  e.terms.push_back({1, 0, 1, 0});
  return e;
}

SizeExpr SizeExpr::symbolP() {
  SizeExpr e;
  e.terms.push_back({1, 0, 0, 1});
  return e;
}

void SizeExpr::normalize() {
  auto degree = [](const Term &t) { return t.t + t.b + t.p; };
  // Highest degree first; then T before B before P.
  llvm::sort(terms, [&](const Term &x, const Term &y) {
    if (degree(x) != degree(y))
      return degree(x) > degree(y);
    return std::make_tuple(x.t, x.b, x.p) > std::make_tuple(y.t, y.b, y.p);
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
      product.terms.push_back(
          {x.coefficient * y.coefficient, x.t + y.t, x.b + y.b, x.p + y.p});
  product.normalize();
  return product;
}

std::optional<int64_t> SizeExpr::getConstant() const {
  if (terms.empty())
    return 0;
  if (terms.size() == 1 && terms[0].t == 0 && terms[0].b == 0 &&
      terms[0].p == 0)
    return terms[0].coefficient;
  return std::nullopt;
}

std::optional<int64_t> SizeExpr::evaluate(const CallShape &shape) const {
  int64_t total = 0;
  for (const Term &term : terms) {
    int64_t value = term.coefficient;
    for (auto [power, base] : {std::pair<unsigned, int64_t>{term.t, shape.T},
                               {term.b, shape.B},
                               {term.p, shape.P}})
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
    for (auto [power, name] : {std::pair<unsigned, const char *>{term.t, "T"},
                               {term.b, "B"},
                               {term.p, "P"}})
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

/// The symbol dimension `dim` of function argument `arg` stands for, by the
/// argument's role (SizeExpr.h), or nothing.
static std::optional<SizeExpr> argumentDim(BlockArgument arg, int64_t dim) {
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  auto type = dyn_cast<MemRefType>(arg.getType());
  if (!func || !type || dim < 0 || dim >= type.getRank())
    return std::nullopt;
  auto name = func.getArgAttrOfType<StringAttr>(
      arg.getArgNumber(), RNNDialect::NameAttrHelper::getNameStr());
  bool startsWithT =
      type.getRank() == 3 || (name && name.getValue() == kRoleIsInit);
  if (startsWithT && dim == 0)
    return SizeExpr::symbolT();
  if (dim == (startsWithT ? 1 : 0))
    return SizeExpr::symbolB();
  return std::nullopt;
}

std::optional<SizeExpr> SizeExpr::ofIndex(Value value,
                                          std::optional<int64_t> &rows) {
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant)))
    return SizeExpr::constant(constant.getSExtValue());
  Operation *def = value.getDefiningOp();
  if (!def)
    return std::nullopt;
  auto binary = [&](Value lhs, Value rhs, bool product)
      -> std::optional<SizeExpr> {
    std::optional<SizeExpr> l = ofIndex(lhs, rows);
    std::optional<SizeExpr> r = l ? ofIndex(rhs, rows) : std::nullopt;
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
    std::optional<int64_t> dummy;
    std::optional<SizeExpr> t = ofIndex(block.getSteps(), dummy);
    std::optional<SizeExpr> b = ofIndex(block.getBatch(), dummy);
    if (!t || !b || *t != symbolT() || *b != symbolB() ||
        (rows && *rows != static_cast<int64_t>(block.getRows())))
      return std::nullopt;
    rows = block.getRows();
    return symbolP();
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
                     rows);
    }
  }
  return std::nullopt;
}

std::optional<SizeExpr> SizeExpr::bytesOf(MemRefType type, ValueRange sizes,
                                          const DataLayout &layout,
                                          std::optional<int64_t> &rows) {
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
    std::optional<SizeExpr> dynamic = ofIndex(sizes[next++], rows);
    if (!dynamic)
      return std::nullopt;
    bytes = bytes * *dynamic;
  }
  return bytes;
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
