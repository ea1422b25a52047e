// RUN: rnn-opt %s --convert-rnn-to-loops --canonicalize --cse | FileCheck %s

// A kernel whose T and B are dynamic: T and B are read from x, the GEMM
// block P is rnn.block_steps of them (the block a static shape has), the
// scratch is sized by B and P * B at the kernel's start, and the blocks
// are a loop over the T / P full ones and, under scf.if, the tail of
// T mod P steps: the GEMMs a kernel of the call's static shape issues.

// CHECK-LABEL: func.func @gru_fwd(
// CHECK-SAME: [[X:%[[:alnum:]_]+]]: memref<?x?x3xf32>
// CHECK-DAG: [[T:%.+]] = memref.dim [[X]], %c0 : memref<?x?x3xf32>
// CHECK-DAG: [[B:%.+]] = memref.dim [[X]], %c1 : memref<?x?x3xf32>
// CHECK: [[P:%.+]] = rnn.block_steps [[T]], [[B]] rows(64)
// CHECK: memref.alloc([[B]]) {{.*}}rnn.role = "preact"{{.*}} : memref<?x12xf32>
// CHECK: [[XPROJ:%.+]] = memref.alloc([[P]], [[B]]) {{.*}}rnn.role = "xproj"{{.*}} : memref<?x?x12xf32>
// CHECK: [[FULL:%.+]] = arith.divui [[T]], [[P]] : index
// CHECK: [[FULLSTEPS:%.+]] = arith.muli [[FULL]], [[P]] : index
// CHECK: [[REST:%.+]] = arith.subi [[T]], [[FULLSTEPS]] : index
// CHECK: scf.for [[W:%.+]] = %c0 to [[FULL]] step %c1 {
// CHECK:   [[START:%.+]] = arith.muli [[W]], [[P]] : index
// CHECK:   memref.subview [[X]][[[START]], 0, 0] [[[P]], [[B]], 3] [1, 1, 1]
// CHECK:   linalg.matmul
// CHECK:   scf.for {{%.+}} = %c0 to [[P]] step %c1 {
// CHECK:     linalg.matmul
// CHECK:     scf.parallel ({{%.+}}, {{%.+}}) = (%c0, %c0) to ([[B]], %c4)
// CHECK: [[TAIL:%.+]] = arith.cmpi ne, [[REST]], %c0 : index
// CHECK: scf.if [[TAIL]] {
// CHECK:   memref.subview [[XPROJ]][0, 0, 0] [[[REST]], [[B]], 12] [1, 1, 1]
// CHECK:   memref.subview [[X]][[[FULLSTEPS]], 0, 0] [[[REST]], [[B]], 3] [1, 1, 1]
// CHECK:   linalg.matmul
// CHECK:   scf.for {{%.+}} = %c0 to [[REST]] step %c1 {
// The final state: y's last step.
// CHECK: [[LAST:%.+]] = arith.subi [[T]], %c1 : index
// CHECK: memref.subview {{%.+}}[[[LAST]], 0, 0]
func.func @gru_fwd(%x: memref<?x?x3xf32>, %is_init: memref<?x?xi1>,
    %h0: memref<?x4xf32>, %w_ih: memref<12x3xf32>, %w_hh: memref<12x4xf32>,
    %b_ih: memref<12xf32>, %b_hh: memref<12xf32>, %y: memref<?x?x4xf32>,
    %hn: memref<?x4xf32>, %g: memref<?x?x12xf32>, %p: memref<?x?x4xf32>) {
  rnn.cell_fwd #rnn.gru rows(64)
      ins(%x, %is_init) states(%h0) weights(%w_ih, %w_hh, %b_ih, %b_hh)
      outs(%y, %hn) saved(gates %g, hn_proj %p)
      : memref<?x?x3xf32>, memref<?x?xi1>, memref<?x4xf32>,
        memref<12x3xf32>, memref<12x4xf32>, memref<12xf32>, memref<12xf32>,
        memref<?x?x4xf32>, memref<?x4xf32>, memref<?x?x12xf32>,
        memref<?x?x4xf32>
  return
}

