// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-emit-c-abi | FileCheck %s
// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-emit-c-abi="prefix=lib_" | FileCheck %s --check-prefix=PREFIX
// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-emit-c-abi --rnn-infer-pipeline 2>&1 | FileCheck %s --check-prefix=LLVM
// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-emit-c-abi="caller-stream=1" | FileCheck %s --check-prefix=STREAM
// RUN: not rnn-opt %s --rnn-emit-c-abi="prefix=1x" 2>&1 | FileCheck %s --check-prefix=DIGIT
// RUN: not rnn-opt %s --rnn-emit-c-abi="prefix=a-b" 2>&1 | FileCheck %s --check-prefix=DASH
// RUN: not rnn-opt %s --rnn-emit-c-abi="prefix=" 2>&1 | FileCheck %s --check-prefix=EMPTY

// rnn-emit-c-abi: each public function with a body gets
// rnnc_<name>(ptr buffers, ptr stream) -> i32 that loads buffers[i], builds
// the descriptor of argument i (offset 0, static sizes, row-major strides),
// calls the function and returns 0. Private and external functions get none.

// CHECK-LABEL: func.func @step(
// CHECK-LABEL: func.func @rnnc_step(
// CHECK-SAME: [[BUFFERS:%[[:alnum:]_]+]]: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
// CHECK: [[SLOT0:%.+]] = llvm.getelementptr [[BUFFERS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: [[P0:%.+]] = llvm.load [[SLOT0]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.insertvalue [[P0]], %{{.*}}[0] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK: llvm.insertvalue [[P0]], %{{.*}}[1]
// CHECK: [[C3:%.+]] = llvm.mlir.constant(3 : i64) : i64
// CHECK: llvm.insertvalue [[C3]], %{{.*}}[3, 1]
// CHECK: [[C1:%.+]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: llvm.insertvalue [[C1]], %{{.*}}[4, 1]
// CHECK: [[C2:%.+]] = llvm.mlir.constant(2 : i64) : i64
// CHECK: llvm.insertvalue [[C2]], %{{.*}}[3, 0]
// CHECK: llvm.mlir.constant(3 : i64)
// CHECK-NEXT: llvm.insertvalue %{{.*}}[4, 0]
// CHECK: [[M0:%.+]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<2x3xf32>
// CHECK: llvm.getelementptr [[BUFFERS]][1]
// CHECK: [[M1:%.+]] = builtin.unrealized_conversion_cast %{{.*}} to memref<3xi1>
// CHECK: call @step([[M0]], [[M1]]) : (memref<2x3xf32>, memref<3xi1>) -> ()
// CHECK: [[ZERO:%.+]] = arith.constant 0 : i32
// CHECK: return [[ZERO]] : i32
// CHECK-NOT: func.func @rnnc_helper
// CHECK-NOT: func.func @rnnc_external

// PREFIX: func.func @lib_step(

// The prefix starts the name of a C function: one that is not a C
// identifier (empty, a leading digit, a dash) is an error naming it.
// DIGIT: error: rnn-emit-c-abi: prefix '1x' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*): C could not call the entry points
// DASH: error: rnn-emit-c-abi: prefix 'a-b' is not a C identifier
// EMPTY: error: rnn-emit-c-abi: prefix '' is not a C identifier

// caller-stream (the cuda target): the entry point takes the caller's
// context first, and the call runs between rnnrt_cuda_enter, given the
// context, the entry point's name (a private global, whose address identifies
// the entry point to the runtime's graph replay), the caller's stream, the
// buffers to check (2 for @step) and their extents in bytes (a private
// global; negative for the buffers the function writes by their role:
// h_n, an output), and rnnrt_cuda_leave, whose status
// the entry point returns. If entering gives 1 (failed) or 2 (a graph of
// the call replayed it) the function does not run and the entry point
// returns 1 or 0.
// STREAM-DAG: llvm.mlir.global private constant @__rnnc_entry_rnnc_step("rnnc_step\00")
// STREAM-DAG: llvm.mlir.global private constant @__rnnc_extents_rnnc_step(dense<[24, -3]> : tensor<2xi64>) {addr_space = 0 : i32} : !llvm.array<2 x i64>
// STREAM-DAG: func.func private @rnnrt_cuda_enter(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> i32
// STREAM-DAG: func.func private @rnnrt_cuda_leave() -> i32
// STREAM-LABEL: func.func @rnnc_step(
// STREAM-SAME: [[CONTEXT:%[[:alnum:]_]+]]: !llvm.ptr, [[BUFFERS:%[[:alnum:]_]+]]: !llvm.ptr, [[STREAM:%[[:alnum:]_]+]]: !llvm.ptr) -> i32
// STREAM: [[GLOBAL:%.+]] = llvm.mlir.addressof @__rnnc_entry_rnnc_step : !llvm.ptr
// STREAM: [[NAME:%.+]] = llvm.getelementptr [[GLOBAL]][0, 0]
// STREAM: [[EXTENTS:%.+]] = llvm.mlir.addressof @__rnnc_extents_rnnc_step : !llvm.ptr
// STREAM: [[COUNT:%.+]] = arith.constant 2 : i64
// STREAM: [[ENTERED:%.+]] = call @rnnrt_cuda_enter([[CONTEXT]], [[NAME]], [[STREAM]], [[BUFFERS]], [[EXTENTS]], [[COUNT]]) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> i32
// STREAM: [[ZERO:%.+]] = arith.constant 0 : i32
// STREAM: [[ONE:%.+]] = arith.constant 1 : i32
// STREAM: [[SKIPS:%.+]] = arith.cmpi ne, [[ENTERED]], [[ZERO]] : i32
// STREAM: cf.cond_br [[SKIPS]], ^[[EARLY:bb[0-9]+]], ^[[CALL:bb[0-9]+]]
// STREAM: ^[[CALL]]:
// STREAM: call @step(
// STREAM: [[STATUS:%.+]] = call @rnnrt_cuda_leave() : () -> i32
// STREAM: return [[STATUS]] : i32
// STREAM: ^[[EARLY]]:
// STREAM: [[FAILED:%.+]] = arith.cmpi eq, [[ENTERED]], [[ONE]] : i32
// STREAM: [[CODE:%.+]] = arith.extui [[FAILED]] : i1 to i32
// STREAM: return [[CODE]] : i32

// After the LLVM lowering the casts are gone: the entry point calls the
// expanded memref calling convention.
// LLVM: llvm.func @rnnc_step(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) -> i32
// LLVM-NOT: unrealized_conversion_cast
// LLVM: llvm.call @step(
func.func @step(%x: memref<2x3xf32>, %m: memref<3xi1> {rnn.name = "h_n"}) {
  return
}
func.func private @helper(%x: memref<2xf32>) {
  return
}
func.func private @external(memref<2xf32>)

// -----

// expected-error @+1 {{has results; a C entry point needs them as out-params}}
func.func @returns(%x: memref<2xf32>) -> memref<2xf32> {
  return %x : memref<2xf32>
}

// -----

// expected-error @+1 {{argument 1 has type 'memref<?xf32>'; a C entry point takes memrefs of integers, indices or floats, of identity layout, whose sizes are static, T or B}}
func.func @dynamic(%x: memref<2xf32>, %y: memref<?xf32>) {
  return
}

// -----

// expected-error @+1 {{argument 0 has type 'f32'; a C entry point takes memrefs of integers}}
func.func @scalar(%x: f32) {
  return
}

// -----

// expected-error @+1 {{argument 0 has type 'memref<2xvector<4xf32>>'; a C entry point takes memrefs of integers}}
func.func @vectors(%x: memref<2xvector<4xf32>>) {
  return
}

// -----

// The descriptor's strides are i64: 12 * 2^60 elements overflow them.
// expected-error @+1 {{argument 0 of type 'memref<2x12x1152921504606846976xi64>' is too large: its size in bytes overflows 64 bits}}
func.func @huge(%x: memref<2x12x1152921504606846976xi64>) {
  return
}

// -----

// 2^61 elements of 8 bytes overflow the size in bytes; 2^60 of 4 would not.
// expected-error @+1 {{argument 1 of type 'memref<2305843009213693952xindex>' is too large}}
func.func @huge_index(%x: memref<2xf32>, %y: memref<2305843009213693952xindex>) {
  return
}

// -----

func.func private @rnnc_taken()
func.func private @lib_taken()
// expected-error-re @+1 {{cannot have a C entry point: symbol @{{rnnc|lib}}_taken already exists}}
func.func @taken(%x: memref<2xf32>) {
  return
}

// -----

// A symbol C cannot spell has no entry point.
// expected-error-re @+1 {{cannot have a C entry point: '{{rnnc|lib}}_f.grad' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*): C could not call it}}
func.func @"f.grad"(%x: memref<2xf32>) {
  return
}


// -----

// A byte buffer's size function is (T, B) -> bytes, and is there.
func.func private @no_bytes(%t: index, %b: index)
// expected-error @+1 {{argument 1 is sized by @no_bytes, which is not a function (index, index) -> i64}}
func.func @sized_by_no_bytes(%x: memref<?x?x4xf32> {rnn.name = "x"},
    %arena: memref<?xi8> {rnn.name = "arena", rnn.size = @no_bytes}) {
  return
}

// -----

// expected-error @+1 {{argument 1 is sized by @missing, which is not a function (index, index) -> i64}}
func.func @sized_by_missing(%x: memref<?x?x4xf32> {rnn.name = "x"},
    %arena: memref<?xi8> {rnn.name = "arena", rnn.size = @missing}) {
  return
}
