// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-emit-c-abi

// rnn-emit-c-abi without caller-stream: code of the cuda target (its GEMM
// runs on the context and stream that rnnrt_cuda_enter sets, and records
// its errors for rnnrt_cuda_leave) needs the entry points of
// caller-stream=1 (emit-c-abi-caller-stream.mlir has the converse).

func.func private @rnnrt_cuda_sgemm(i64, i64, f32, f32, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>)
func.func @matmul(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %c: memref<2x4xf32>) {
  %f = arith.constant 0 : i64
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %ca = memref.cast %a : memref<2x3xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  %cb = memref.cast %b : memref<3x4xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  %cc = memref.cast %c : memref<2x4xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  // expected-error @+1 {{'func.call' op calls @rnnrt_cuda_sgemm of the CUDA runtime, which runs on the context and stream an entry point takes under rnn-emit-c-abi{caller-stream=1} (the cuda target's); without it, the entry point would neither give them nor return the errors it records}}
  func.call @rnnrt_cuda_sgemm(%f, %f, %one, %zero, %ca, %cb, %cc) : (i64, i64, f32, f32, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()
  return
}

// -----

// Code of the cpu target: its GEMM on host memory, entry points without a
// stream.
func.func private @rnnrt_sgemm(i64, i64, f32, f32, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>)
func.func @matmul(%a: memref<2x3xf32>, %b: memref<3x4xf32>, %c: memref<2x4xf32>) {
  %f = arith.constant 0 : i64
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %ca = memref.cast %a : memref<2x3xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  %cb = memref.cast %b : memref<3x4xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  %cc = memref.cast %c : memref<2x4xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  func.call @rnnrt_sgemm(%f, %f, %one, %zero, %ca, %cb, %cc) : (i64, i64, f32, f32, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()
  return
}
