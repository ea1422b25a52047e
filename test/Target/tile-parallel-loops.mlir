// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-tile-parallel-loops | FileCheck %s
// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-tile-parallel-loops="block-size=32" | FileCheck %s --check-prefix=B32
// RUN: not rnn-opt %s -split-input-file --rnn-tile-parallel-loops="block-size=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not rnn-opt %s -split-input-file --rnn-tile-parallel-loops="block-size=1025" 2>&1 | FileCheck %s --check-prefix=LARGE

// rnn-tile-parallel-loops splits every outermost scf.parallel into a loop
// over blocks and a nested loop over the threads of a block (at most
// block-size, default 256), filling the innermost dimension first.

// A block has 1 to 1024 threads (CUDA's limit, which the pipelines check
// too).
// ZERO: error: rnn-tile-parallel-loops: block-size must be in [1, 1024], got 0
// LARGE: error: rnn-tile-parallel-loops: block-size must be in [1, 1024], got 1025

// [64, 512]: a block is 256 consecutive elements of one row; 512 is a
// multiple of 256, so no bound check.

// CHECK-LABEL: func.func @rows(
// CHECK-DAG: [[C1:%[[:alnum:]_]+]] = arith.constant 1 : index
// CHECK-DAG: [[C256:%[[:alnum:]_]+]] = arith.constant 256 : index
// CHECK-DAG: [[ROWS:%[[:alnum:]_]+]] = arith.muli [[C1]], [[C1]]
// CHECK-DAG: [[COLS:%[[:alnum:]_]+]] = arith.muli [[C1]], [[C256]]
// CHECK: scf.parallel ([[B0:%[[:alnum:]_]+]], [[H0:%[[:alnum:]_]+]]) = ({{.*}}) to ({{.*}}) step ([[ROWS]], [[COLS]])
// CHECK: scf.parallel ([[B1:%[[:alnum:]_]+]], [[H1:%[[:alnum:]_]+]]) = ({{.*}}) to ([[ROWS]], [[COLS]]) step ([[C1]], [[C1]])
// CHECK-DAG: [[B:%[[:alnum:]_]+]] = arith.addi [[B1]], [[B0]]
// CHECK-DAG: [[H:%[[:alnum:]_]+]] = arith.addi [[H1]], [[H0]]
// CHECK-NOT: scf.if
// CHECK: memref.store {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}[[[B]], [[H]]]

// B32: func.func @rows(
// B32-DAG: [[C32:%[[:alnum:]_]+]] = arith.constant 32 : index
// B32-DAG: arith.muli {{%[[:alnum:]_]+}}, [[C32]]
func.func @rows(%m: memref<64x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%b, %h) = (%c0, %c0) to (%c64, %c512) step (%c1, %c1) {
    memref.store %zero, %m[%b, %h] : memref<64x512xf32>
  }
  return
}

// -----

// [8, 100]: a row has 100 elements, so a block takes two rows (200
// threads) rather than running 100 threads of 256.

// CHECK-LABEL: func.func @short_rows(
// CHECK-DAG: [[C2:%[[:alnum:]_]+]] = arith.constant 2 : index
// CHECK-DAG: [[C100:%[[:alnum:]_]+]] = arith.constant 100 : index
// CHECK-DAG: [[ROWS:%[[:alnum:]_]+]] = arith.muli {{%[[:alnum:]_]+}}, [[C2]]
// CHECK-DAG: [[COLS:%[[:alnum:]_]+]] = arith.muli {{%[[:alnum:]_]+}}, [[C100]]
// CHECK: scf.parallel {{.*}} step ([[ROWS]], [[COLS]])
// CHECK: scf.parallel {{.*}} to ([[ROWS]], [[COLS]])
// CHECK-NOT: scf.if
// CHECK: memref.store
func.func @short_rows(%m: memref<8x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c100 = arith.constant 100 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%b, %h) = (%c0, %c0) to (%c8, %c100) step (%c1, %c1) {
    memref.store %zero, %m[%b, %h] : memref<8x100xf32>
  }
  return
}

// -----

// 300 is not a multiple of the block: the block keeps its constant shape
// and the threads past the end do nothing.

// CHECK-LABEL: func.func @ragged(
// CHECK-DAG: [[C300:%[[:alnum:]_]+]] = arith.constant 300 : index
// CHECK-DAG: [[C256:%[[:alnum:]_]+]] = arith.constant 256 : index
// CHECK: [[STEP:%[[:alnum:]_]+]] = arith.muli {{%[[:alnum:]_]+}}, [[C256]]
// CHECK: scf.parallel ([[J0:%[[:alnum:]_]+]]) = ({{.*}}) to ([[C300]]) step ([[STEP]])
// CHECK: scf.parallel ([[J1:%[[:alnum:]_]+]]) = ({{.*}}) to ([[STEP]])
// CHECK: [[J:%[[:alnum:]_]+]] = arith.addi [[J1]], [[J0]]
// CHECK: [[IN:%[[:alnum:]_]+]] = arith.cmpi ult, {{%[[:alnum:]_]+}}, [[C300]]
// CHECK: scf.if
// CHECK: memref.store {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}[[[J]]]
func.func @ragged(%v: memref<300xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c300 = arith.constant 300 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%j) = (%c0) to (%c300) step (%c1) {
    memref.store %zero, %v[%j] : memref<300xf32>
  }
  return
}

// -----

// [3, 2, 4]: the whole loop fits in one block of 4 x 2 x 3 threads.

// CHECK-LABEL: func.func @small_3d(
// CHECK-DAG: [[C2:%[[:alnum:]_]+]] = arith.constant 2 : index
// CHECK-DAG: [[C3:%[[:alnum:]_]+]] = arith.constant 3 : index
// CHECK-DAG: [[C4:%[[:alnum:]_]+]] = arith.constant 4 : index
// CHECK-DAG: [[T:%[[:alnum:]_]+]] = arith.muli {{%[[:alnum:]_]+}}, [[C3]]
// CHECK-DAG: [[B:%[[:alnum:]_]+]] = arith.muli {{%[[:alnum:]_]+}}, [[C2]]
// CHECK-DAG: [[H:%[[:alnum:]_]+]] = arith.muli {{%[[:alnum:]_]+}}, [[C4]]
// CHECK: scf.parallel {{.*}} step ([[T]], [[B]], [[H]])
// CHECK: scf.parallel {{.*}} to ([[T]], [[B]], [[H]])
func.func @small_3d(%m: memref<3x2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%t, %b, %h) = (%c0, %c0, %c0) to (%c3, %c2, %c4) step (%c1, %c1, %c1) {
    memref.store %zero, %m[%t, %b, %h] : memref<3x2x4xf32>
  }
  return
}

// -----

// Only the outermost loop is tiled.

// CHECK-LABEL: func.func @nested(
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: scf.parallel ([[I:%[[:alnum:]_]+]]) = ({{.*}}) to ({{.*}}) step ({{.*}}) {
// CHECK-NEXT: memref.store
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @nested(%m: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%j) = (%c0) to (%c16) step (%c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
        memref.store %zero, %m[%j, %i] : memref<16x8xf32>
      }
    }
  }
  return
}

// -----

// A loop with reductions cannot be mapped to threads as it is: an error
// names it instead of a failure deep in the GPU conversion.

func.func @reduction(%v: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{rnn-tile-parallel-loops: an scf.parallel with reductions cannot become a GPU kernel}}
  %sum = scf.parallel (%j) = (%c0) to (%c16) step (%c1) init (%zero) -> f32 {
    %x = memref.load %v[%j] : memref<16xf32>
    scf.reduce(%x : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}
