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
