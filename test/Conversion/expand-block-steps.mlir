// RUN: rnn-opt %s --rnn-expand-block-steps | FileCheck %s
// RUN: rnn-opt %s --canonicalize | FileCheck %s --check-prefix=FOLD

// The GEMM block of a dynamic shape: the loop that doubles P from 1 while
// P < T and P * B < rows, then P clamped to [1, T].

// CHECK-LABEL: func.func @block(
// CHECK-SAME: [[T:%[[:alnum:]_]+]]: index, [[B:%[[:alnum:]_]+]]: index)
// CHECK: [[C1:%.+]] = arith.constant 1 : index
// CHECK: [[PERSTEP:%.+]] = arith.maxui [[B]], [[C1]] : index
// CHECK: [[R:%.+]] = arith.constant 256 : index
// CHECK: [[WANTED:%.+]] = arith.ceildivui [[R]], [[PERSTEP]] : index
// CHECK: [[LOOP:%.+]] = scf.while ([[P:%.+]] = [[C1]]) : (index) -> index {
// CHECK:   [[LT:%.+]] = arith.cmpi ult, [[P]], [[T]] : index
// CHECK:   [[LR:%.+]] = arith.cmpi ult, [[P]], [[WANTED]] : index
// CHECK:   [[GO:%.+]] = arith.andi [[LT]], [[LR]] : i1
// CHECK:   scf.condition([[GO]]) [[P]] : index
// CHECK: } do {
// CHECK: ^bb0([[Q:%.+]]: index):
// CHECK:   [[TWICE:%.+]] = arith.shli [[Q]], [[C1]] : index
// CHECK:   scf.yield [[TWICE]] : index
// CHECK: [[MIN:%.+]] = arith.minui [[LOOP]], [[T]] : index
// CHECK: [[MAX:%.+]] = arith.maxui [[MIN]], [[C1]] : index
// CHECK: return [[MAX]]
// CHECK-NOT: rnn.block_steps
func.func @block(%t: index, %b: index) -> index {
  %p = rnn.block_steps %t, %b rows(256)
  return %p : index
}

// (second function)
// With constant T and B it folds to the block of that static shape
// (gemmBlockSteps): 256 rows of B = 24 take 11 steps, a power of two 16,
// at most T.

// FOLD-LABEL: func.func @folds(
// FOLD-DAG: [[C16:%.+]] = arith.constant 16 : index
// FOLD-DAG: [[C5:%.+]] = arith.constant 5 : index
// FOLD-DAG: [[C1:%.+]] = arith.constant 1 : index
// FOLD: return [[C16]], [[C5]], [[C1]]
func.func @folds() -> (index, index, index) {
  %t64 = arith.constant 64 : index
  %t5 = arith.constant 5 : index
  %b24 = arith.constant 24 : index
  %b512 = arith.constant 512 : index
  %p = rnn.block_steps %t64, %b24 rows(256)
  %q = rnn.block_steps %t5, %b24 rows(256)
  %r = rnn.block_steps %t64, %b512 rows(256)
  return %p, %q, %r : index, index, index
}
