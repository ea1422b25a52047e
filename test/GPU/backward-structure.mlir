// REQUIRES: ptxas
// RUN: rnn-opt %s --rnn-train-pipeline="target=cuda" --mlir-print-ir-after=rnn-device-buffers -o /dev/null 2>&1 | FileCheck %s
// RUN: rnn-opt %s --rnn-train-to-buffers-pipeline="target=cuda" --test-rnn-gemm-calls -o /dev/null | FileCheck %s --check-prefix=COUNT

// The backward on the cuda target (T = 8, I = 3, H = 5). Bias gradients
// are GEMVs against a buffer of ones, computed by cuBLAS
// (rnnrt_cuda_sgemm), and no kernel walks rows serially: no gpu.func holds
// a loop, so every kernel is one thread per element, as many blocks as the
// elements ask for. At B = 4096 (blocks of P = 4 steps) the kernel that
// begins the backward sets the gradients reaching the last step (4096 x 5
// each), the 16384 ones and the zeroed weight gradients on 80 blocks of
// 256 threads.

// CHECK-LABEL: func.func @lstm_b4096_grad(
// CHECK: [[ONES:%[[:alnum:]_]+]], {{%[[:alnum:]_]+}} = gpu.alloc async {{.*}}rnn.role = "ones"{{.*}} : memref<1x16384xf32>
// CHECK: [[ONESM:%[[:alnum:]_]+]] = memref.cast [[ONES]]
// CHECK: call @rnnrt_cuda_sgemm({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, [[ONESM]],
// CHECK-LABEL: func.func @gru_b4096_grad(
// CHECK: [[ONES:%[[:alnum:]_]+]], {{%[[:alnum:]_]+}} = gpu.alloc async {{.*}}rnn.role = "ones"{{.*}} : memref<1x16384xf32>
// CHECK: [[ONESM:%[[:alnum:]_]+]] = memref.cast [[ONES]]
// CHECK: call @rnnrt_cuda_sgemm({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, [[ONESM]],
// CHECK: call @rnnrt_cuda_sgemm({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, [[ONESM]],
// CHECK-LABEL: gpu.module @rnn_kernels
// CHECK-NOT: scf.for
// CHECK: gpu.func {{.*}}known_block_size = array<i32: 256, 1, 1>, known_grid_size = array<i32: 80, 1, 1>
// CHECK-NOT: scf.for

// GEMMs per step and per block with the cuda target's GEMM rows (16384):
// at B = 4096 blocks of P = 4 steps, one GEMM per step in the backward
// (the recurrent gradient), the others per block.

// COUNT-LABEL: gemm calls of @lstm_b4096_grad: 26
// COUNT-NEXT: loop of 2 iterations: 5 per iteration (1 directly)
// COUNT-NEXT: loop of 4 iterations: 1 per iteration (1 directly)
// COUNT-NEXT: loop of 2 iterations: 8 per iteration (4 directly)
// COUNT-NEXT: loop of 4 iterations: 1 per iteration (1 directly)

func.func @lstm_b4096(%arg0: tensor<8x4096x3xf32> {rnn.name = "x"}, %arg1: tensor<8x4096xi1> {rnn.name = "is_init"}, %arg2: tensor<4096x5xf32> {rnn.layer = 0 : i64, rnn.name = "h0"}, %arg3: tensor<4096x5xf32> {rnn.layer = 0 : i64, rnn.name = "c0"}, %arg4: tensor<20x3xf32> {rnn.name = "weight_ih_l0"}, %arg5: tensor<20x5xf32> {rnn.name = "weight_hh_l0"}, %arg6: tensor<20xf32> {rnn.name = "bias_ih_l0"}, %arg7: tensor<20xf32> {rnn.name = "bias_hh_l0"}) -> (tensor<8x4096x5xf32> {rnn.name = "y"}, tensor<4096x5xf32> {rnn.layer = 0 : i64, rnn.name = "h_n"}, tensor<4096x5xf32> {rnn.layer = 0 : i64, rnn.name = "c_n"}) {
  %y, %hN, %cN = rnn.lstm %arg0 reset %arg1 state(%arg2, %arg3) weights(%arg4, %arg5, %arg6, %arg7) : (tensor<8x4096x3xf32>, tensor<8x4096xi1>, tensor<4096x5xf32>, tensor<4096x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<20xf32>) -> (tensor<8x4096x5xf32>, tensor<4096x5xf32>, tensor<4096x5xf32>)
  return %y, %hN, %cN : tensor<8x4096x5xf32>, tensor<4096x5xf32>, tensor<4096x5xf32>
}

func.func @gru_b4096(%arg0: tensor<8x4096x3xf32> {rnn.name = "x"}, %arg1: tensor<8x4096xi1> {rnn.name = "is_init"}, %arg2: tensor<4096x5xf32> {rnn.layer = 0 : i64, rnn.name = "h0"}, %arg3: tensor<15x3xf32> {rnn.name = "weight_ih_l0"}, %arg4: tensor<15x5xf32> {rnn.name = "weight_hh_l0"}, %arg5: tensor<15xf32> {rnn.name = "bias_ih_l0"}, %arg6: tensor<15xf32> {rnn.name = "bias_hh_l0"}) -> (tensor<8x4096x5xf32> {rnn.name = "y"}, tensor<4096x5xf32> {rnn.layer = 0 : i64, rnn.name = "h_n"}) {
  %y, %hN = rnn.gru %arg0 reset %arg1 state(%arg2) weights(%arg3, %arg4, %arg5, %arg6) : (tensor<8x4096x3xf32>, tensor<8x4096xi1>, tensor<4096x5xf32>, tensor<15x3xf32>, tensor<15x5xf32>, tensor<15xf32>, tensor<15xf32>) -> (tensor<8x4096x5xf32>, tensor<4096x5xf32>)
  return %y, %hN : tensor<8x4096x5xf32>, tensor<4096x5xf32>
}
