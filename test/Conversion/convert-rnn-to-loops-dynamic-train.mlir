// RUN: rnn-opt %s --rnn-autodiff="gemm-rows=4" --rnn-expand-forward --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --convert-rnn-to-loops="vector-width=1" --canonicalize --cse | FileCheck %s

// The backward kernel's first loop sets its buffers of several shapes (the
// state gradients [B, 5] copied in, the weight and bias gradients zeroed,
// the ones [1, T * B]): one scf.parallel, as for a static shape (one
// launch on the GPU), over the largest count at run time, each body under
// its own count.

// CHECK-LABEL: func.func @lstm_grad(
// CHECK: rnn.begin_backward
// CHECK: [[ONES:%.+]] = memref.alloc([[TB:%.+]]) {{.*}}rnn.role = "ones"
// CHECK-NEXT: [[STATE:%.+]] = arith.muli [[B:%.+]], %c5 : index
// CHECK-NEXT: [[M1:%.+]] = arith.maxui [[STATE]], %c60 : index
// CHECK-NEXT: [[M2:%.+]] = arith.maxui [[M1]], %c100 : index
// CHECK-NEXT: [[M3:%.+]] = arith.maxui [[M2]], %c20 : index
// CHECK-NEXT: [[MAX:%.+]] = arith.maxui [[M3]], [[TB]] : index
// CHECK-NEXT: scf.parallel ([[I:%.+]]) = (%c0) to ([[MAX]]) step (%c1) {
// CHECK-NEXT: [[IN:%.+]] = arith.cmpi ult, [[I]], [[STATE]] : index
// CHECK-NEXT: scf.if [[IN]] {
// CHECK: arith.cmpi ult, [[I]], %c60 : index
// CHECK: arith.cmpi ult, [[I]], %c100 : index
// CHECK: arith.cmpi ult, [[I]], %c20 : index
// CHECK: arith.cmpi ult, [[I]], [[TB]] : index
// CHECK: memref.store %{{.+}}, [[ONES]]
// CHECK: scf.reduce
func.func @lstm(%x: tensor<?x?x3xf32>, %is_init: tensor<?x?xi1>,
                %h0: tensor<?x5xf32>, %c0: tensor<?x5xf32>,
                %w_ih: tensor<20x3xf32>, %w_hh: tensor<20x5xf32>,
                %b_ih: tensor<20xf32>, %b_hh: tensor<20xf32>)
    -> (tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>) {
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<?x?x3xf32>, tensor<?x?xi1>, tensor<?x5xf32>, tensor<?x5xf32>,
         tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>)
      -> (tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>)
  return %y, %h_n, %c_n : tensor<?x?x5xf32>, tensor<?x5xf32>, tensor<?x5xf32>
}
