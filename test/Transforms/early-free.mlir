// RUN: rnn-opt %s -split-input-file --rnn-early-free | FileCheck %s

// rnn-early-free moves the memref.dealloc of each top-level buffer of a
// function to right after the last op that uses the buffer or one of its
// views (a use nested in a loop counts as a use by the loop). Returned
// buffers, deallocs already in place and buffers allocated inside regions
// are left alone.

// A buffer last read by a load: its dealloc moves from the end of the
// function to right after the load, before the arithmetic that follows.

// CHECK-LABEL: func.func @after_load(
// CHECK: [[A:%[[:alnum:]_]+]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: memref.store {{%[[:alnum:]_]+}}, [[A]]
// CHECK-NEXT: [[R:%[[:alnum:]_]+]] = memref.load [[A]]
// CHECK-NEXT: memref.dealloc [[A]] : memref<8xf32>
// CHECK-NEXT: arith.addf [[R]],
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: return
func.func @after_load(%i: index, %v: f32) -> f32 {
  %a = memref.alloc() : memref<8xf32>
  memref.store %v, %a[%i] : memref<8xf32>
  %r = memref.load %a[%i] : memref<8xf32>
  %w = arith.addf %r, %v : f32
  %x = arith.mulf %w, %w : f32
  memref.dealloc %a : memref<8xf32>
  return %x : f32
}

// -----

// The last use of %a is a load of its collapse_shape inside a loop: %a is
// freed right after the loop. %b, written in the loop, is last read by the
// copy after it and freed right after the copy; the final store into the
// argument does not touch either buffer.

// CHECK-LABEL: func.func @view_in_loop(
// CHECK-SAME: [[OUT:%[[:alnum:]_]+]]: memref<8xf32>)
// CHECK: [[A:%[[:alnum:]_]+]] = memref.alloc() : memref<4x8xf32>
// CHECK: [[B:%[[:alnum:]_]+]] = memref.alloc() : memref<8xf32>
// CHECK: [[FLAT:%[[:alnum:]_]+]] = memref.collapse_shape [[A]]
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.load [[FLAT]]
// CHECK-NEXT: memref.store {{%[[:alnum:]_]+}}, [[B]]
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc [[A]] : memref<4x8xf32>
// CHECK-NEXT: memref.copy [[B]], [[OUT]]
// CHECK-NEXT: memref.dealloc [[B]] : memref<8xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: memref.store {{%[[:alnum:]_]+}}, [[OUT]]
// CHECK-NEXT: return
func.func @view_in_loop(%n: index, %v: f32, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<4x8xf32>
  %b = memref.alloc() : memref<8xf32>
  linalg.fill ins(%v : f32) outs(%a : memref<4x8xf32>)
  %flat = memref.collapse_shape %a [[0, 1]]
      : memref<4x8xf32> into memref<32xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %flat[%i] : memref<32xf32>
    memref.store %x, %b[%i] : memref<8xf32>
  }
  memref.copy %b, %out : memref<8xf32> to memref<8xf32>
  %w = arith.addf %v, %v : f32
  memref.store %w, %out[%c0] : memref<8xf32>
  memref.dealloc %a : memref<4x8xf32>
  memref.dealloc %b : memref<8xf32>
  return
}

// -----

// A use through a subview whose last user is a vector.load: the dealloc
// follows the vector.load, not the subview.

// CHECK-LABEL: func.func @through_subview(
// CHECK: [[A:%[[:alnum:]_]+]] = memref.alloc() : memref<4x8xf32>
// CHECK: [[ROW:%[[:alnum:]_]+]] = memref.subview [[A]]
// CHECK-NEXT: [[R:%[[:alnum:]_]+]] = vector.load [[ROW]]
// CHECK-NEXT: memref.dealloc [[A]] : memref<4x8xf32>
// CHECK-NEXT: arith.addf [[R]], [[R]]
func.func @through_subview(%i: index) -> vector<4xf32> {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<4x8xf32>
  %row = memref.subview %a[%i, 0] [1, 8] [1, 1]
      : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
  %r = vector.load %row[%c0]
      : memref<8xf32, strided<[1], offset: ?>>, vector<4xf32>
  %s = arith.addf %r, %r : vector<4xf32>
  memref.dealloc %a : memref<4x8xf32>
  return %s : vector<4xf32>
}

// -----

// A dealloc already right after the last use stays where it is, and the
// function is unchanged.

// CHECK-LABEL: func.func @already_early(
// CHECK: [[A:%[[:alnum:]_]+]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: memref.store {{%[[:alnum:]_]+}}, [[A]]
// CHECK-NEXT: memref.load [[A]]
// CHECK-NEXT: memref.dealloc [[A]] : memref<8xf32>
// CHECK-NEXT: arith.addf
// CHECK-NEXT: return
func.func @already_early(%i: index, %v: f32) -> f32 {
  %a = memref.alloc() : memref<8xf32>
  memref.store %v, %a[%i] : memref<8xf32>
  %r = memref.load %a[%i] : memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  %w = arith.addf %r, %v : f32
  return %w : f32
}

// -----

// Three buffers: each dealloc moves to its own place, and %unused, which
// only its dealloc touches, is freed right after its allocation. The
// returned buffer %res gets no dealloc.

// CHECK-LABEL: func.func @several(
// CHECK: [[RES:%[[:alnum:]_]+]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: [[A:%[[:alnum:]_]+]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: [[B:%[[:alnum:]_]+]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: [[UNUSED:%[[:alnum:]_]+]] = memref.alloc() : memref<32xf32>
// CHECK-NEXT: memref.dealloc [[UNUSED]] : memref<32xf32>
// CHECK-NEXT: memref.copy {{%[[:alnum:]_]+}}, [[A]]
// CHECK-NEXT: memref.copy [[A]], [[RES]]
// CHECK-NEXT: memref.dealloc [[A]] : memref<8xf32>
// CHECK-NEXT: linalg.fill {{.*}} outs([[B]] :
// CHECK-NEXT: memref.load [[B]]
// CHECK-NEXT: memref.dealloc [[B]] : memref<16xf32>
// CHECK-NEXT: memref.store {{%[[:alnum:]_]+}}, [[RES]]
// CHECK-NOT: memref.dealloc
// CHECK: return [[RES]] : memref<8xf32>
func.func @several(%in: memref<8xf32>, %i: index, %v: f32) -> memref<8xf32> {
  %res = memref.alloc() : memref<8xf32>
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<16xf32>
  %unused = memref.alloc() : memref<32xf32>
  memref.copy %in, %a : memref<8xf32> to memref<8xf32>
  memref.copy %a, %res : memref<8xf32> to memref<8xf32>
  linalg.fill ins(%v : f32) outs(%b : memref<16xf32>)
  %x = memref.load %b[%i] : memref<16xf32>
  memref.store %x, %res[%i] : memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<16xf32>
  memref.dealloc %unused : memref<32xf32>
  return %res : memref<8xf32>
}

// -----

// A buffer allocated and freed inside a loop body is not a top-level
// buffer: its dealloc stays at the end of the body even though its last
// use comes earlier.

// CHECK-LABEL: func.func @nested_alloc(
// CHECK: scf.for
// CHECK-NEXT: [[T:%[[:alnum:]_]+]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: memref.store {{%[[:alnum:]_]+}}, [[T]]
// CHECK-NEXT: memref.load [[T]]
// CHECK-NEXT: arith.addf
// CHECK-NEXT: memref.store
// CHECK-NEXT: memref.dealloc [[T]] : memref<8xf32>
// CHECK-NEXT: }
func.func @nested_alloc(%n: index, %v: f32, %out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<8xf32>
    memref.store %v, %t[%i] : memref<8xf32>
    %x = memref.load %t[%i] : memref<8xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %out[%i] : memref<8xf32>
    memref.dealloc %t : memref<8xf32>
  }
  return
}

// -----

// In a wavefront a buffer used between rnn.fork and rnn.join is freed after
// the join, however early its last use: another lane may still be running
// what comes before it in program order. %a's last use is on lane 0 and
// its dealloc, at the end, moves to right after the join; %b's dealloc,
// placed on lane 1, moves there too. %c, last used after the join, is
// freed right after that use.

// CHECK-LABEL: func.func @lanes(
// CHECK: rnn.fork
// CHECK-NEXT: rnn.lane 0
// CHECK-NEXT: memref.store {{%[[:alnum:]_]+}}, [[A:%[[:alnum:]_]+]]
// CHECK-NEXT: rnn.lane 1
// CHECK-NEXT: memref.store {{%[[:alnum:]_]+}}, [[B:%[[:alnum:]_]+]]
// CHECK-NEXT: rnn.join
// CHECK-DAG: memref.dealloc [[A]] :
// CHECK-DAG: memref.dealloc [[B]] :
// CHECK: memref.store {{%[[:alnum:]_]+}}, [[C:%[[:alnum:]_]+]]
// CHECK-NEXT: memref.dealloc [[C]]
// CHECK-NEXT: return
func.func @lanes(%i: index, %v: f32) {
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  %c = memref.alloc() : memref<8xf32>
  rnn.fork
  rnn.lane 0
  memref.store %v, %a[%i] : memref<8xf32>
  rnn.lane 1
  memref.store %v, %b[%i] : memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  rnn.join
  memref.store %v, %c[%i] : memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %c : memref<8xf32>
  return
}
