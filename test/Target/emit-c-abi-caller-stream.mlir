// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-emit-c-abi="caller-stream=1"

// rnn-emit-c-abi{caller-stream}: the runtime functions the entry points
// call must not be taken by another declaration (emit-c-abi.mlir checks
// what it emits).

// expected-error @+1 {{@rnnrt_cuda_leave is the rnnc runtime's function of type '() -> i32' that rnn-emit-c-abi{caller-stream=1} calls; the module defines the symbol otherwise}}
func.func private @rnnrt_cuda_leave(i64) -> i32
func.func @calls(%x: memref<2xf32>) {
  return
}

// -----

// A declaration of the right type is used as it is.
func.func private @rnnrt_cuda_enter(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> i32
func.func @calls(%x: memref<2xf32>) {
  return
}

// -----

// Code of the cpu target (its GEMM reads host memory) cannot run on a
// CUDA stream.
func.func private @rnnrt_sgemm(i64, i64, f32, f32, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>)
func.func @matmul(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %c: memref<2x4xf32>) {
  %f = arith.constant 0 : i64
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %ca = memref.cast %a : memref<2x3xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  %cb = memref.cast %b : memref<3x4xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  %cc = memref.cast %c : memref<2x4xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  // expected-error @+1 {{'func.call' op calls @rnnrt_sgemm, the cpu target's GEMM on host memory: rnn-emit-c-abi{caller-stream=1} is for code of the cuda target, whose entry points run on a CUDA stream}}
  func.call @rnnrt_sgemm(%f, %f, %one, %zero, %ca, %cb, %cc) : (i64, i64, f32, f32, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()
  return
}
