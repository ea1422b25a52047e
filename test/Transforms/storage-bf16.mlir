// RUN: rnn-opt %s --rnn-autodiff="gemm-rows=3" | FileCheck %s
// RUN: rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=gates" | FileCheck %s --check-prefix=GATES
// RUN: rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=chunk:2" | FileCheck %s --check-prefix=CHUNK
// RUN: rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=chunk:2" --rnn-expand-forward --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --convert-rnn-to-loops="vector-width=1" | FileCheck %s --check-prefix=LOOPS
// RUN: rnn-opt %s --rnn-autodiff="gemm-rows=3" --rnn-rematerialize="policy=chunk:2" --rnn-expand-forward --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --convert-rnn-to-loops="vector-width=1 storage-gemm=1" | FileCheck %s --check-prefix=GEMM

// `storage = bf16` on a layer: its kernels carry the attribute, the saved
// values that are not states (the gates) are bf16 and the states (cells,
// and their checkpoints) stay f32, whatever the remat policy.

// CHECK-LABEL: func.func @lstm_grad(
// CHECK: rnn.cell_fwd #rnn.lstm {{.*}} saved(gates %{{.*}}, cells %{{.*}}) {rnn.layer = 0 : i64, storage = bf16}
// CHECK-SAME: -> tensor<4x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<4x3x20xbf16>, tensor<4x3x5xf32>
// CHECK: rnn.cell_bwd #rnn.lstm {{.*}} saved(y %{{.*}}, gates %{{.*}}, cells %{{.*}}) {{.*}}{rnn.layer = 0 : i64, storage = bf16}
// CHECK-SAME: tensor<4x3x20xbf16>, tensor<4x3x5xf32>

// GATES-LABEL: func.func @lstm_grad(
// GATES: rnn.cell_replay #rnn.lstm {{.*}} outs(gates %{{.*}}) {rnn.layer = 0 : i64, storage = bf16}
// GATES-SAME: -> tensor<4x3x20xbf16>
// GATES: rnn.cell_bwd #rnn.lstm {{.*}} storage = bf16

// CHUNK-LABEL: func.func @lstm_grad(
// CHUNK: rnn.cell_fwd #rnn.lstm block(1) chunk(2) {{.*}} storage = bf16
// CHUNK-SAME: -> tensor<4x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<4x3x20xbf16>, tensor<2x3x5xf32>
// CHUNK: rnn.cell_bwd #rnn.lstm block(1) chunk(2) {{.*}} storage = bf16

// The lowering: each weight is rounded to bf16 once per kernel, into f32
// scratch (bf16 values are exact in f32); every other GEMM operand is
// rounded (or widened from bf16) into scratch right before its GEMM; a
// saved gate is stored rounded and read widened. The chunked backward
// replays into bf16 gates and f32 cells, projecting into f32 scratch as
// the forward does.

// LOOPS-LABEL: func.func @lstm_grad(
// LOOPS: %[[WIH:.*]] = memref.alloc() {rnn.kernel = "lstm_fwd", rnn.layer = 0 : i64, rnn.role = "gemm_weight"} : memref<20x2xf32>
// LOOPS: scf.parallel
// LOOPS: %[[W:.*]] = memref.load %{{.*}} : memref<20x2xf32>
// LOOPS-NEXT: %[[N:.*]] = arith.truncf %[[W]] : f32 to bf16
// LOOPS-NEXT: %[[E:.*]] = arith.extf %[[N]] : bf16 to f32
// LOOPS-NEXT: memref.store %[[E]], %[[WIH]]
// LOOPS: %[[XOP:.*]] = memref.alloc() {{.*}}rnn.role = "gemm_operand"} : memref<3x2xf32>
// LOOPS: linalg.matmul {{.*}} ins(%[[XOP]], %[[WIH]] : memref<3x2xf32>, memref<20x2xf32>)
// LOOPS: %[[STEP:.*]] = memref.subview %{{.*}} : memref<4x3x20xbf16> to memref<3x20xbf16
// LOOPS: memref.store %{{.*}}, %[[STEP]][%{{.*}}, %{{.*}}] : memref<3x20xbf16
// LOOPS: memref.alloc() {{.*}}rnn.kernel = "lstm_chunked_bwd", {{.*}}rnn.role = "gates"} : memref<2x3x20xbf16>
// LOOPS: memref.alloc() {{.*}}rnn.kernel = "lstm_chunked_bwd", {{.*}}rnn.role = "cells"} : memref<2x3x5xf32>
// LOOPS: memref.alloc() {{.*}}rnn.kernel = "lstm_chunked_bwd", {{.*}}rnn.role = "xproj"} : memref<1x3x20xf32>
// LOOPS: memref.load %{{.*}} : memref<3x20xbf16, strided<[20, 1], offset: ?>>
// LOOPS-NEXT: arith.extf %{{.*}} : bf16 to f32
// LOOPS-NOT: linalg.matmul {{.*}}bf16
// LOOPS: return

// With storage-gemm (the cuda target, whose GEMM takes bf16 operands) the
// weights and every converted operand are bf16 scratch, half the bytes, a
// saved bf16 value (the replayed gates, the gate gradients the backward
// writes over them) is an operand as it stands, and the ones of the bias
// gradients are bf16: every matmul takes bf16 A and B into f32 C.

// GEMM-LABEL: func.func @lstm_grad(
// GEMM: %[[WIH:.*]] = memref.alloc() {rnn.kernel = "lstm_fwd", rnn.layer = 0 : i64, rnn.role = "gemm_weight"} : memref<20x2xbf16>
// GEMM: scf.parallel
// GEMM: %[[W:.*]] = memref.load %{{.*}} : memref<20x2xf32>
// GEMM-NEXT: %[[N:.*]] = arith.truncf %[[W]] : f32 to bf16
// GEMM-NEXT: memref.store %[[N]], %[[WIH]]
// GEMM: %[[XOP:.*]] = memref.alloc() {{.*}}rnn.role = "gemm_operand"} : memref<3x2xbf16>
// GEMM: linalg.matmul {{.*}} ins(%[[XOP]], %[[WIH]] : memref<3x2xbf16>, memref<20x2xbf16>) outs(%{{.*}} : memref<3x20xf32>)
// GEMM: %[[BWIH:.*]] = memref.alloc() {rnn.kernel = "lstm_chunked_bwd", rnn.layer = 0 : i64, rnn.role = "gemm_weight"} : memref<20x2xbf16>
// GEMM: %[[BWHH:.*]] = memref.alloc() {rnn.kernel = "lstm_chunked_bwd", rnn.layer = 0 : i64, rnn.role = "gemm_weight"} : memref<20x5xbf16>
// GEMM: %[[REPLAYED:.*]] = memref.alloc() {{.*}}rnn.kernel = "lstm_chunked_bwd", {{.*}}rnn.role = "gates"} : memref<2x3x20xbf16>
// GEMM: %[[ONES:.*]] = memref.alloc() {{.*}}rnn.role = "ones"} : memref<1x3xbf16>
// GEMM: linalg.matmul ins(%{{.*}}, %[[BWHH]] : memref<3x20xbf16, strided<[20, 1], offset: ?>>, memref<20x5xbf16>) outs(%{{.*}} : memref<3x5xf32>)
// GEMM: %[[BLOCK:.*]] = memref.subview %[[REPLAYED]]
// GEMM: %[[DG:.*]] = memref.collapse_shape %[[BLOCK]] {{.*}} into memref<3x20xbf16
// GEMM-NOT: memref.load %[[DG]]
// GEMM: linalg.matmul ins(%[[DG]], %[[BWIH]] : memref<3x20xbf16, strided<[20, 1], offset: ?>>, memref<20x2xbf16>)
// GEMM: linalg.matmul {{.*}} ins(%[[DG]], %{{.*}} : memref<3x20xbf16, strided<[20, 1], offset: ?>>, memref<3x2xbf16>) outs(%{{.*}} : memref<20x2xf32>)
// GEMM: linalg.matmul ins(%[[ONES]], %[[DG]] : memref<1x3xbf16>, memref<3x20xbf16, strided<[20, 1], offset: ?>>) outs(%{{.*}} : memref<1x20xf32>)
// GEMM-NOT: linalg.matmul ins({{.*}} : memref<{{[0-9x]+}}xf32
// GEMM-NOT: rnn.role = "gemm_operand"} : memref<{{[0-9x]+}}xf32>
// GEMM: return

func.func @lstm(%x: tensor<4x3x2xf32> {rnn.name = "x"},
    %r: tensor<4x3xi1> {rnn.name = "is_init"},
    %h0: tensor<3x5xf32> {rnn.name = "h0", rnn.layer = 0 : i64},
    %c0: tensor<3x5xf32> {rnn.name = "c0", rnn.layer = 0 : i64},
    %wi: tensor<20x2xf32> {rnn.name = "weight_ih_l0"},
    %wh: tensor<20x5xf32> {rnn.name = "weight_hh_l0"},
    %bi: tensor<20xf32> {rnn.name = "bias_ih_l0"},
    %bh: tensor<20xf32> {rnn.name = "bias_hh_l0"})
    -> (tensor<4x3x5xf32> {rnn.name = "y"}) {
  %y, %hn, %cn = rnn.lstm %x reset %r state(%h0, %c0)
      weights(%wi, %wh, %bi, %bh) {storage = bf16}
      : (tensor<4x3x2xf32>, tensor<4x3xi1>, tensor<3x5xf32>, tensor<3x5xf32>,
         tensor<20x2xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<4x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  return %y : tensor<4x3x5xf32>
}
