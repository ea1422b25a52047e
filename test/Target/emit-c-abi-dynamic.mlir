// RUN: rnn-opt %s --rnn-emit-c-abi | FileCheck %s
// RUN: rnn-opt %s --rnn-emit-c-abi="caller-stream=1" | FileCheck %s --check-prefix=STREAM
// RUN: rnn-opt %s --rnn-emit-c-abi --rnn-infer-pipeline | FileCheck %s --check-prefix=LLVM

// On the caller's CUDA stream (caller-stream=1) the entry point takes the
// context first, checks the shape, then hands the runtime the context and
// the buffers' extents at (T, B) (the bytes, negated for the buffers the
// function writes: here the arena), which check them and key a call's
// graph replay.
// STREAM-LABEL: func.func @rnnc_g(
// STREAM-SAME: [[CONTEXT:%[[:alnum:]_]+]]: !llvm.ptr, [[T:%[[:alnum:]_]+]]: i64, [[B:%[[:alnum:]_]+]]: i64, [[BUFFERS:%[[:alnum:]_]+]]: !llvm.ptr, [[STREAM:%[[:alnum:]_]+]]: !llvm.ptr) -> i32
// STREAM: [[SIZES:%.+]] = llvm.alloca %c5_i64 x i64
// STREAM: call @rnnc_g_sizes([[T]], [[B]], [[SIZES]])
// STREAM: cf.cond_br
// STREAM: [[EXTENTS:%.+]] = llvm.alloca
// STREAM: llvm.getelementptr [[SIZES]][4]
// STREAM-NEXT: [[ARENA:%.+]] = llvm.load
// STREAM: [[NEGATED:%.+]] = llvm.sub %c0_i64, [[ARENA]] : i64
// STREAM-NEXT: [[SLOT:%.+]] = llvm.getelementptr [[EXTENTS]][4]
// STREAM-NEXT: llvm.store [[NEGATED]], [[SLOT]]
// STREAM: call @rnnrt_cuda_enter([[CONTEXT]], %{{.+}}, [[STREAM]], [[BUFFERS]], [[EXTENTS]], %{{.+}})
// STREAM: call @g(
// STREAM: [[LEFT:%.+]] = call @rnnrt_cuda_leave()
// STREAM-NEXT: return [[LEFT]] : i32
// LLVM: llvm.func @rnnc_g_sizes(%{{.+}}: i64, %{{.+}}: i64, %{{.+}}: !llvm.ptr) -> i32
// LLVM: llvm.func @rnnc_g(%{{.+}}: i64, %{{.+}}: i64, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr) -> i32

// A function for every T and B: sizes of its arguments' T (dimension 0 of
// a sequence or of is_init) and B, and a byte buffer sized by its rnn.size
// function. @rnnc_g_sizes writes each argument's bytes at (T, B) in
// checked i64 arithmetic (12 * T * B for x, 1 * T * B for is_init,
// 20 * B for h0, 240 for the weight, the arena's function) and returns 1
// for T or B below 1 or an overflow, else 2 where a size function gives -2
// (no remat plan fits a budget there, rnn-dispatch-remat); @rnnc_g takes (T, B, buffers,
// stream), returns that status before touching a buffer, and builds the
// descriptors from T, B and the sizes.

// CHECK-LABEL: func.func @rnnc_g_sizes(
// CHECK-SAME: [[T:%[[:alnum:]_]+]]: i64, [[B:%[[:alnum:]_]+]]: i64, [[OUT:%[[:alnum:]_]+]]: !llvm.ptr) -> i32
// CHECK: arith.cmpi slt, [[B]], %c1_i64
// CHECK: arith.cmpi slt, [[T]], %c1_i64
// CHECK: arith.mului_extended %c12_i64, [[T]] : i64
// CHECK: llvm.getelementptr [[OUT]][0]
// CHECK: arith.mului_extended %c20_i64, [[B]] : i64
// CHECK: llvm.getelementptr [[OUT]][2]
// CHECK: arith.addui_extended %{{.+}}, %c240_i64
// CHECK: [[ARENA:%.+]] = call @g.arena_bytes(%{{.+}}, %{{.+}}) : (index, index) -> i64
// CHECK: [[NOPLAN:%.+]] = arith.cmpi eq, [[ARENA]], %c-2_i64 : i64
// CHECK: [[NONE:%.+]] = arith.ori %false, [[NOPLAN]] : i1
// CHECK: [[NEGATIVE:%.+]] = arith.cmpi slt, [[ARENA]], %c0_i64
// CHECK: [[OTHER:%.+]] = arith.andi [[NEGATIVE]], %{{.+}} : i1
// CHECK: [[OVERFLOW:%.+]] = arith.ori %{{.+}}, [[OTHER]] : i1
// CHECK: llvm.store [[ARENA]], %{{.+}} : i64, !llvm.ptr
// CHECK: [[UNPLANNED:%.+]] = arith.select [[NONE]], %c2_i32, %c0_i32 : i32
// CHECK: [[STATUS:%.+]] = arith.select [[OVERFLOW]], %c1_i32, [[UNPLANNED]] : i32
// CHECK: return [[STATUS]] : i32
// CHECK-LABEL: func.func @rnnc_g(
// CHECK-SAME: [[T:%[[:alnum:]_]+]]: i64, [[B:%[[:alnum:]_]+]]: i64, [[BUFFERS:%[[:alnum:]_]+]]: !llvm.ptr, {{%[[:alnum:]_]+}}: !llvm.ptr) -> i32
// CHECK: [[SIZES:%.+]] = llvm.alloca %c5_i64 x i64
// CHECK: [[CHECKED:%.+]] = call @rnnc_g_sizes([[T]], [[B]], [[SIZES]])
// CHECK: [[BAD:%.+]] = arith.cmpi ne, [[CHECKED]], %c0_i32
// CHECK: cf.cond_br [[BAD]], [[EARLY:\^bb[0-9]+]], [[CALL:\^bb[0-9]+]]
// CHECK: [[CALL]]:
// CHECK: llvm.insertvalue [[B]], %{{.+}}[3, 1]
// CHECK: llvm.insertvalue [[T]], %{{.+}}[3, 0]
// CHECK: call @g(
// CHECK: [[EARLY]]:
// CHECK-NEXT: return [[CHECKED]] : i32
func.func private @g.arena_bytes(%t: index, %b: index) -> i64 {
  %c = arith.constant 64 : i64
  return %c : i64
}
func.func @g(%x: memref<?x?x3xf32>, %is_init: memref<?x?xi1> {rnn.name = "is_init"},
             %h0: memref<?x5xf32>, %w: memref<20x3xf32>,
             %arena: memref<?xi8> {rnn.name = "arena", rnn.size = @g.arena_bytes}) {
  return
}
