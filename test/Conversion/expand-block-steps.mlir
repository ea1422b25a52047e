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

// (third function)
// The chunk of a dynamic shape: K rounded up to whole blocks, T where
// that passes T, and at least 1 (T = 0 is refused, after the sizes).

// CHECK-LABEL: func.func @chunk(
// CHECK-SAME: [[T:%[[:alnum:]_]+]]: index, [[P:%[[:alnum:]_]+]]: index)
// CHECK: [[C8:%.+]] = arith.constant 8 : index
// CHECK: [[BLOCKS:%.+]] = arith.ceildivui [[C8]], [[P]] : index
// CHECK: [[LAST:%.+]] = arith.divui [[T]], [[P]] : index
// CHECK: [[BEYOND:%.+]] = arith.cmpi ugt, [[BLOCKS]], [[LAST]] : index
// CHECK: [[WHOLE:%.+]] = arith.muli [[BLOCKS]], [[P]] : index
// CHECK: [[K:%.+]] = arith.select [[BEYOND]], [[T]], [[WHOLE]] : index
// CHECK: [[ONE:%.+]] = arith.constant 1 : index
// CHECK: [[K1:%.+]] = arith.maxui [[K]], [[ONE]] : index
// CHECK: return [[K1]]
// CHECK-NOT: rnn.chunk_steps
func.func @chunk(%t: index, %p: index) -> index {
  %k = rnn.chunk_steps %t, %p chunk(8)
  return %k : index
}

// (fourth function)
// With constant T and P it folds to the chunk of that static shape
// (chunkStepsFor): 3 steps in blocks of 4 run 4, 9 run 12, and past
// T = 10 (blocks of 4) they run T.

// FOLD-LABEL: func.func @chunk_folds(
// FOLD-DAG: [[C4:%.+]] = arith.constant 4 : index
// FOLD-DAG: [[C8:%.+]] = arith.constant 8 : index
// FOLD-DAG: [[C10:%.+]] = arith.constant 10 : index
// FOLD: return [[C4]], [[C8]], [[C10]]
func.func @chunk_folds() -> (index, index, index) {
  %t = arith.constant 10 : index
  %p = arith.constant 4 : index
  %k3 = rnn.chunk_steps %t, %p chunk(3)
  %k8 = rnn.chunk_steps %t, %p chunk(8)
  %k9 = rnn.chunk_steps %t, %p chunk(9)
  return %k3, %k8, %k9 : index, index, index
}
