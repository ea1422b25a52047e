// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-matmul-to-blas | FileCheck %s
// RUN: rnn-opt %s -split-input-file --rnn-matmul-to-blas="callee=rnnrt_cuda_sgemm callee-bf16=rnnrt_cuda_gemm_bf16" | FileCheck %s --check-prefix=CUDA
// RUN: not rnn-opt %s -split-input-file --rnn-matmul-to-blas="callee=" 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not rnn-opt %s -split-input-file --rnn-matmul-to-blas="callee-f64=" 2>&1 | FileCheck %s --check-prefix=NOF64
// RUN: not rnn-opt %s -split-input-file --rnn-matmul-to-blas="callee=1x" 2>&1 | FileCheck %s --check-prefix=DIGIT
// RUN: not rnn-opt %s -split-input-file --rnn-matmul-to-blas="callee-f64=a-b" 2>&1 | FileCheck %s --check-prefix=DASH
// RUN: not rnn-opt %s -split-input-file --rnn-matmul-to-blas="callee=plain callee-bf16=rnnrt_cuda_gemm_bf16" 2>&1 >/dev/null | FileCheck %s --check-prefix=DEFINED --implicit-check-not="see current operation"
// RUN: not rnn-opt %s -split-input-file --rnn-matmul-to-blas="callee-f64=rnnrt_sgemm" 2>&1 | FileCheck %s --check-prefix=SAMEF64
// RUN: not rnn-opt %s -split-input-file --rnn-matmul-to-blas="callee-f64=gemm callee-bf16=gemm" 2>&1 | FileCheck %s --check-prefix=SAMEBF16

// rnn-matmul-to-blas turns each f32 linalg.matmul on memrefs into
// call @rnnrt_sgemm(transA, transB, alpha = 1, beta, A, B, C) with the
// operands cast to fully dynamic strided memrefs; the flags come from the
// indexing maps, and a zero fill of C right before the product becomes
// beta = 0.

// With callee=rnnrt_cuda_sgemm (the cuda pipeline) the same calls go to
// the runtime's GPU GEMM, declared with the same C interface. A callee is
// a C function: a name C cannot call (empty for callee; callee-f64 and
// callee-bf16 may be empty, for none) is an error naming the option.
// CUDA-NOT: call @rnnrt_sgemm(
// CUDA: func.func private @rnnrt_cuda_sgemm(i64, i64, f32, f32, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
// CUDA-LABEL: func.func @plain(
// CUDA: call @rnnrt_cuda_sgemm(
// CUDA-NOT: call @rnnrt_sgemm(
// EMPTY: error: rnn-matmul-to-blas: callee '' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)
// DIGIT: error: rnn-matmul-to-blas: callee '1x' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)
// DASH: error: rnn-matmul-to-blas: callee-f64 'a-b' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*); empty: the target has no such GEMM
// Each callee has the type of its GEMM's element types: one name given
// to two options is an error naming both, not a clash of declarations.
// SAMEF64: error: rnn-matmul-to-blas: callee-f64 'rnnrt_sgemm' is also callee: each GEMM callee has a type of its own
// SAMEBF16: error: rnn-matmul-to-blas: callee-bf16 'gemm' is also callee-f64: each GEMM callee has a type of its own

// A plain product: no transposition, beta = 1 (C += A B), and one private
// declaration with the C interface.

// CHECK: func.func private @rnnrt_sgemm(i64, i64, f32, f32, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
// CHECK-NOT: @rnnrt_sgemm(i64
// CHECK-LABEL: func.func @plain(
// CHECK-SAME: [[A:%[[:alnum:]_]+]]: memref<4x3xf32>, [[B:%[[:alnum:]_]+]]: memref<3x5xf32>, [[C:%[[:alnum:]_]+]]: memref<4x5xf32>)
// CHECK-DAG: [[NOTRANS_A:%[[:alnum:]_]+]] = arith.constant 0 : i64
// CHECK-DAG: [[NOTRANS_B:%[[:alnum:]_]+]] = arith.constant 0 : i64
// CHECK-DAG: [[ALPHA:%[[:alnum:]_]+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: [[BETA:%[[:alnum:]_]+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: [[CA:%[[:alnum:]_]+]] = memref.cast [[A]] : memref<4x3xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-DAG: [[CB:%[[:alnum:]_]+]] = memref.cast [[B]] : memref<3x5xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK-DAG: [[CC:%[[:alnum:]_]+]] = memref.cast [[C]] : memref<4x5xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: call @rnnrt_sgemm([[NOTRANS_A]], [[NOTRANS_B]], [[ALPHA]], [[BETA]], [[CA]], [[CB]], [[CC]])
// CHECK-NOT: linalg.matmul
// CHECK: return
// With callee=plain this function takes the calls: the error names it at
// its location, without printing it.
// DEFINED: matmul-to-blas.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: @plain is the rnnc runtime's function of type '(i64, i64, f32, f32, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()' that rnn-matmul-to-blas calls; the module defines the symbol otherwise
func.func @plain(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  linalg.matmul ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>)
      outs(%c : memref<4x5xf32>)
  return
}

// -----

// B transposed (C = A B^T, B stored [N, K]) after a zero fill of C: the fill
// is folded into beta = 0 and erased.

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// CHECK-LABEL: func.func @trans_b_zero_fill(
// CHECK-NOT: linalg.fill
// CHECK-DAG: [[NO:%[[:alnum:]_]+]] = arith.constant 0 : i64
// CHECK-DAG: [[YES:%[[:alnum:]_]+]] = arith.constant 1 : i64
// CHECK-DAG: [[ONE:%[[:alnum:]_]+]] = arith.constant 1.000000e+00 : f32
// CHECK: [[ZERO:%[[:alnum:]_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.fill
// CHECK: call @rnnrt_sgemm([[NO]], [[YES]], [[ONE]], [[ZERO]], {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}})
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @trans_b_zero_fill(%a: memref<4x3xf32>, %b: memref<5x3xf32>,
                             %c: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%a, %b : memref<4x3xf32>, memref<5x3xf32>)
      outs(%c : memref<4x5xf32>)
  return
}

// -----

// A transposed (C = A^T B, A stored [K, M]), and both transposed.

#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

// CHECK-LABEL: func.func @trans_a(
// CHECK-DAG: [[YES:%[[:alnum:]_]+]] = arith.constant 1 : i64
// CHECK-DAG: [[NO:%[[:alnum:]_]+]] = arith.constant 0 : i64
// CHECK: call @rnnrt_sgemm([[YES]], [[NO]],
// CHECK-NOT: linalg.matmul
// CHECK-LABEL: func.func @trans_both(
// CHECK-DAG: [[YES_A:%[[:alnum:]_]+]] = arith.constant 1 : i64
// CHECK-DAG: [[YES_B:%[[:alnum:]_]+]] = arith.constant 1 : i64
// CHECK: call @rnnrt_sgemm([[YES_A]], [[YES_B]],
// CHECK-NOT: linalg.matmul
func.func @trans_a(%a: memref<3x4xf32>, %b: memref<3x5xf32>,
                   %c: memref<4x5xf32>) {
  linalg.matmul indexing_maps = [#km, #kn, #mn]
      ins(%a, %b : memref<3x4xf32>, memref<3x5xf32>)
      outs(%c : memref<4x5xf32>)
  return
}

func.func @trans_both(%a: memref<3x4xf32>, %b: memref<5x3xf32>,
                      %c: memref<4x5xf32>) {
  linalg.matmul indexing_maps = [#km, #nk, #mn]
      ins(%a, %b : memref<3x4xf32>, memref<5x3xf32>)
      outs(%c : memref<4x5xf32>)
  return
}

// -----

// Views (a subview of one step of a [T, B, X] buffer, a collapsed sequence)
// are passed as they are: the cast keeps their offset and strides.

// CHECK-LABEL: func.func @views(
// CHECK-SAME: [[OUT:%[[:alnum:]_]+]]: memref<3x2x4xf32>)
// CHECK: [[STEP:%[[:alnum:]_]+]] = memref.subview
// CHECK: [[CA:%[[:alnum:]_]+]] = memref.cast [[STEP]] : memref<2x8xf32, strided<[8, 1], offset: ?>> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: call @rnnrt_sgemm({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, [[CA]], {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}})
// CHECK: [[FLAT:%[[:alnum:]_]+]] = memref.collapse_shape [[OUT]]
// CHECK: [[CC:%[[:alnum:]_]+]] = memref.cast [[FLAT]] : memref<6x4xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: call @rnnrt_sgemm({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, [[CC]])
// CHECK-NOT: linalg.matmul
func.func @views(%seq: memref<3x2x8xf32>, %t: index, %w: memref<8x4xf32>,
                 %h: memref<2x4xf32>, %x: memref<3x2x5xf32>,
                 %v: memref<5x4xf32>, %out: memref<3x2x4xf32>) {
  %step = memref.subview %seq[%t, 0, 0] [1, 2, 8] [1, 1, 1]
      : memref<3x2x8xf32> to memref<2x8xf32, strided<[8, 1], offset: ?>>
  linalg.matmul ins(%step, %w : memref<2x8xf32, strided<[8, 1], offset: ?>>,
                                memref<8x4xf32>)
      outs(%h : memref<2x4xf32>)
  %x2 = memref.collapse_shape %x [[0, 1], [2]]
      : memref<3x2x5xf32> into memref<6x5xf32>
  %out2 = memref.collapse_shape %out [[0, 1], [2]]
      : memref<3x2x4xf32> into memref<6x4xf32>
  linalg.matmul ins(%x2, %v : memref<6x5xf32>, memref<5x4xf32>)
      outs(%out2 : memref<6x4xf32>)
  return
}

// -----

// Fills that must stay: a non-zero fill (beta stays 1), a zero fill of
// another buffer, and a zero fill with a write to C in between.

// CHECK-LABEL: func.func @fill_one(
// CHECK: linalg.fill ins({{%[[:alnum:]_]+}} : f32) outs({{%[[:alnum:]_]+}} : memref<4x5xf32>)
// CHECK-DAG: [[ONE:%[[:alnum:]_]+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: [[BETA:%[[:alnum:]_]+]] = arith.constant 1.000000e+00 : f32
// CHECK: call @rnnrt_sgemm({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, [[ONE]], [[BETA]],
// CHECK-LABEL: func.func @fill_other(
// CHECK-SAME: [[D:%[[:alnum:]_]+]]: memref<4x5xf32>)
// CHECK: linalg.fill ins({{%[[:alnum:]_]+}} : f32) outs([[D]] : memref<4x5xf32>)
// CHECK-DAG: [[ONE:%[[:alnum:]_]+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: [[BETA:%[[:alnum:]_]+]] = arith.constant 1.000000e+00 : f32
// CHECK: call @rnnrt_sgemm({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, [[ONE]], [[BETA]],
// CHECK-LABEL: func.func @fill_then_store(
// CHECK: linalg.fill
// CHECK: memref.store
// CHECK-DAG: [[ONE:%[[:alnum:]_]+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: [[BETA:%[[:alnum:]_]+]] = arith.constant 1.000000e+00 : f32
// CHECK: call @rnnrt_sgemm({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, [[ONE]], [[BETA]],
func.func @fill_one(%a: memref<4x3xf32>, %b: memref<3x5xf32>,
                    %c: memref<4x5xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<4x5xf32>)
  linalg.matmul ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>)
      outs(%c : memref<4x5xf32>)
  return
}

func.func @fill_other(%a: memref<4x3xf32>, %b: memref<3x5xf32>,
                      %c: memref<4x5xf32>, %d: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%d : memref<4x5xf32>)
  linalg.matmul ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>)
      outs(%c : memref<4x5xf32>)
  return
}

func.func @fill_then_store(%a: memref<4x3xf32>, %b: memref<3x5xf32>,
                           %c: memref<4x5xf32>, %i: index, %v: f32) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  memref.store %v, %c[%i, %i] : memref<4x5xf32>
  linalg.matmul ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>)
      outs(%c : memref<4x5xf32>)
  return
}

// -----

// An f64 product calls callee-f64 (rnnrt_dgemm, f64 alpha and beta), with
// its own declaration; with an empty callee-f64 (the cuda pipeline, whose
// cuBLAS is called in f32 only) it is an error.

// CHECK: func.func private @rnnrt_dgemm(i64, i64, f64, f64, memref<?x?xf64, strided<[?, ?], offset: ?>>, memref<?x?xf64, strided<[?, ?], offset: ?>>, memref<?x?xf64, strided<[?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
// CHECK-NOT: rnnrt_sgemm
// CHECK-LABEL: func.func @f64(
// CHECK: [[ONE:%[[:alnum:]_]+]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: [[ZERO:%[[:alnum:]_]+]] = arith.constant 0.000000e+00 : f64
// CHECK: call @rnnrt_dgemm({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, [[ONE]], [[ZERO]], {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}}) : (i64, i64, f64, f64, memref<?x?xf64
// CHECK-NOT: linalg.matmul
// NOF64: error: rnn-matmul-to-blas: the target has no f64 GEMM (no callee-f64)
func.func @f64(%a: memref<4x3xf64>, %b: memref<3x5xf64>, %c: memref<4x5xf64>) {
  %zero = arith.constant 0.0 : f64
  linalg.fill ins(%zero : f64) outs(%c : memref<4x5xf64>)
  linalg.matmul ins(%a, %b : memref<4x3xf64>, memref<3x5xf64>)
      outs(%c : memref<4x5xf64>)
  return
}

// -----

// Left alone: a product on tensors, and a matmul whose A is broadcast (not
// a matrix access); with no call, no declaration is added.

#k = affine_map<(m, n, k) -> (k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// CHECK-NOT: rnnrt_sgemm
// CHECK-LABEL: func.func @tensors(
// CHECK: linalg.matmul ins({{%[[:alnum:]_]+}}, {{%[[:alnum:]_]+}} : tensor<4x3xf32>, tensor<3x5xf32>)
// CHECK-LABEL: func.func @broadcast(
// CHECK: linalg.matmul indexing_maps =
// CHECK-NOT: rnnrt_sgemm
func.func @tensors(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>,
                   %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>)
      outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

func.func @broadcast(%a: memref<3xf32>, %b: memref<3x5xf32>,
                     %c: memref<4x5xf32>) {
  linalg.matmul indexing_maps = [#k, #kn, #mn]
      ins(%a, %b : memref<3xf32>, memref<3x5xf32>)
      outs(%c : memref<4x5xf32>)
  return
}

// -----

// An existing declaration of the callee is reused, not duplicated.

// CHECK: func.func private @rnnrt_sgemm(
// CHECK-NOT: func.func private @rnnrt_sgemm(
// CHECK-LABEL: func.func @declared(
// CHECK: call @rnnrt_sgemm(
func.func private @rnnrt_sgemm(i64, i64, f32, f32,
    memref<?x?xf32, strided<[?, ?], offset: ?>>,
    memref<?x?xf32, strided<[?, ?], offset: ?>>,
    memref<?x?xf32, strided<[?, ?], offset: ?>>)
    attributes {llvm.emit_c_interface}

func.func @declared(%a: memref<4x3xf32>, %b: memref<3x5xf32>,
                    %c: memref<4x5xf32>) {
  linalg.matmul ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>)
      outs(%c : memref<4x5xf32>)
  return
}

// -----

// A function of that name with another signature, or a body, would take
// the calls: an error names it.

// expected-error @+1 {{@rnnrt_sgemm is the rnnc runtime's function of type '(i64, i64, f32, f32, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()' that rnn-matmul-to-blas calls; the module defines the symbol otherwise}}
func.func private @rnnrt_sgemm(i64, i64, f32, f32)

func.func @conflicting(%a: memref<4x3xf32>, %b: memref<3x5xf32>,
                       %c: memref<4x5xf32>) {
  linalg.matmul ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>)
      outs(%c : memref<4x5xf32>)
  return
}

// -----

// A product of bf16 A and B into an f32 C (bf16 storage on the cuda target)
// calls callee-bf16 with f32 alpha and beta; without one (the default: the
// CPU's OpenBLAS has no bf16 GEMM) it is an error.

// CUDA: func.func private @rnnrt_cuda_gemm_bf16(i64, i64, f32, f32, memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xbf16, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
// CUDA-LABEL: func.func @bf16(
// CUDA-DAG: [[YES:%[[:alnum:]_]+]] = arith.constant 1 : i64
// CUDA-DAG: [[NO:%[[:alnum:]_]+]] = arith.constant 0 : i64
// CUDA-DAG: [[ONE:%[[:alnum:]_]+]] = arith.constant 1.000000e+00 : f32
// CUDA: [[ZERO:%[[:alnum:]_]+]] = arith.constant 0.000000e+00 : f32
// CUDA-DAG: [[CA:%[[:alnum:]_]+]] = memref.cast %{{.*}} : memref<4x3xbf16> to memref<?x?xbf16, strided<[?, ?], offset: ?>>
// CUDA-DAG: [[CB:%[[:alnum:]_]+]] = memref.cast %{{.*}} : memref<5x3xbf16> to memref<?x?xbf16, strided<[?, ?], offset: ?>>
// CUDA-DAG: [[CC:%[[:alnum:]_]+]] = memref.cast %{{.*}} : memref<4x5xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CUDA: call @rnnrt_cuda_gemm_bf16([[NO]], [[YES]], [[ONE]], [[ZERO]], [[CA]], [[CB]], [[CC]])
// CUDA-NOT: linalg.matmul
// CUDA-NOT: call @rnnrt_cuda_sgemm

#mk = affine_map<(m, n, k) -> (m, k)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>

func.func @bf16(%a: memref<4x3xbf16>, %b: memref<5x3xbf16>,
                %c: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x5xf32>)
  // expected-error @+1 {{rnn-matmul-to-blas: the target has no bf16 GEMM (no callee-bf16)}}
  linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%a, %b : memref<4x3xbf16>, memref<5x3xbf16>)
      outs(%c : memref<4x5xf32>)
  return
}
