// REQUIRES: ptxas
// RUN: rnn-opt %s --rnn-train-pipeline=target=cuda | FileCheck %s
// RUN: rnn-opt %s --rnn-train-pipeline=target=cuda | FileCheck %s --check-prefix=LOWERED
// RUN: rnn-opt %s --rnn-train-pipeline=target=cuda --mlir-print-ir-after=rnn-device-buffers -o /dev/null 2>&1 | FileCheck %s --check-prefix=HOST
// RUN: rnn-opt %s --rnn-train-pipeline=target=cuda --mlir-print-ir-after=rnn-device-buffers -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOOPS
// RUN: rnn-opt %s --rnn-train-pipeline="target=cuda arena=1 remat=chunk:2" | FileCheck %s --check-prefix=ARENA
// RUN: rnn-opt %s --rnn-train-pipeline=target=cuda | FileCheck %s --check-prefix=STREAM

// rnn-train-pipeline{target=cuda} (the ptxas feature stands for the CUDA
// toolkit, whose libdevice the pipeline links): the host functions end in
// the LLVM dialect, allocating and freeing device memory through the
// runtime (mgpuMemAlloc/mgpuMemFree, on streams), launching kernels and
// calling rnnrt_cuda_sgemm; the kernels are PTX for sm_90 in one
// gpu.binary.

// CHECK-DAG: llvm.func @_mlir_ciface_rnnrt_cuda_sgemm(i64, i64, f32, f32, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-DAG: llvm.func @rnnrt_begin_phase(i64)
// CHECK-LABEL: llvm.func @lstm_grad(
// CHECK: llvm.call @mgpuMemAlloc(
// CHECK: llvm.call @rnnrt_cuda_sgemm(
// CHECK: gpu.launch_func <%{{[0-9]+}} : !llvm.ptr> @rnn_kernels::@{{[[:alnum:]_]+}} blocks in
// CHECK: llvm.call @rnnrt_begin_phase(
// CHECK: llvm.call @mgpuMemFree(
// CHECK: llvm.return
// CHECK: gpu.binary @rnn_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "{{.*}}.version 8.0{{.*}}.target sm_90{{.*}}.entry lstm_grad_kernel(
// CHECK-DAG: llvm.func @mgpuMemAlloc(i64, !llvm.ptr, i8) -> !llvm.ptr
// CHECK-DAG: llvm.func @mgpuMemFree(!llvm.ptr, !llvm.ptr)

// Nothing above the LLVM dialect is left on the host but the launches and
// the binary, and no allocation goes through the CPU allocator; the PTX
// names no libdevice function.
// LOWERED-NOT: {{^ *(%[^=]+= )?(func|math|scf|memref|linalg|arith|rnn|vector|tensor|bufferization|affine|cf)\.}}
// LOWERED-NOT: {{^ *(%[^=]+= )?gpu\.(alloc|dealloc|wait|launch |module|func)}}
// LOWERED-NOT: _mlir_memref_to_llvm_alloc
// LOWERED-NOT: __nv_

// Before the LLVM lowering, the host reads and writes no buffer: every
// load, store and loop on buffers is in the kernels, allocations are
// device allocations (keeping their role for the memory report), and the
// functions keep the plan's predicted peak.
// HOST: IR Dump After DeviceBuffersPass
// HOST-NOT: memref.load
// HOST-NOT: memref.store
// HOST-NOT: vector.
// HOST-NOT: memref.copy
// HOST-NOT: linalg.
// HOST-NOT: scf.parallel
// HOST-NOT: {{memref\.alloc\(}}
// HOST-NOT: memref.dealloc
// HOST: gpu.module @rnn_kernels
// HOST: memref.load
// HOST: memref.store

// The host keeps the time loops: per step the recurrent GEMM and one
// kernel, forward (GEMM, then the gate kernel) and backward (the
// gate-gradient kernel, then the GEMM); the reset is applied inside them.
// With arena=1 the planned buffers are views of an arena argument: the
// host code of a step allocates and frees no device memory, so the step can
// be captured as a CUDA graph and replayed.
// ARENA-LABEL: llvm.func @lstm_grad(
// ARENA-NOT: mgpuMemAlloc
// ARENA-NOT: mgpuMemFree
// ARENA: llvm.return

// LOOPS-LABEL: func.func @lstm_grad(
// LOOPS-SAME: rnn.predicted_peak_bytes
// LOOPS: gpu.alloc async {{.*}}rnn.role = "y"
// LOOPS: scf.for
// LOOPS-NOT: gpu.launch_func
// LOOPS: func.call @rnnrt_cuda_sgemm(
// LOOPS-NEXT: memref.alloca_scope
// LOOPS-NEXT: gpu.launch_func
// LOOPS-NEXT: }
// LOOPS-NEXT: }
// LOOPS: call @rnnrt_begin_phase(
// LOOPS: scf.for
// LOOPS-NOT: func.call
// LOOPS: gpu.launch_func
// LOOPS-NEXT: }
// LOOPS-NOT: gpu.launch_func
// LOOPS: func.call @rnnrt_cuda_sgemm(
// LOOPS-NEXT: }
// LOOPS: gpu.launch_func
// LOOPS: gpu.module @rnn_kernels
// LOOPS: gpu.func @lstm_grad_kernel(
// LOOPS-SAME: kernel

func.func @lstm(%x: tensor<3x2x3xf32> {rnn.name = "x"},
    %is_init: tensor<3x2xi1> {rnn.name = "is_init"},
    %h0: tensor<2x4xf32> {rnn.name = "h0", rnn.layer = 0 : i64},
    %c0: tensor<2x4xf32> {rnn.name = "c0", rnn.layer = 0 : i64},
    %w_ih: tensor<16x3xf32> {rnn.name = "weight_ih_l0"},
    %w_hh: tensor<16x4xf32> {rnn.name = "weight_hh_l0"},
    %b_ih: tensor<16xf32> {rnn.name = "bias_ih_l0"},
    %b_hh: tensor<16xf32> {rnn.name = "bias_hh_l0"})
    -> (tensor<3x2x4xf32> {rnn.name = "y"},
        tensor<2x4xf32> {rnn.name = "h_n", rnn.layer = 0 : i64},
        tensor<2x4xf32> {rnn.name = "c_n", rnn.layer = 0 : i64}) {
  %y, %h_n, %c_n = rnn.lstm %x reset %is_init state(%h0, %c0)
      weights(%w_ih, %w_hh, %b_ih, %b_hh)
      : (tensor<3x2x3xf32>, tensor<3x2xi1>, tensor<2x4xf32>, tensor<2x4xf32>,
         tensor<16x3xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>)
      -> (tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %y, %h_n, %c_n : tensor<3x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// All device work of a function is on one stream, made at its entry and
// synchronized once, before the return; each launch's argument slots are
// released after it (the launches in the time loops do not grow the stack).
// STREAM-LABEL: llvm.func @lstm_grad(
// STREAM: [[S:%[0-9]+]] = llvm.call @mgpuStreamCreate()
// STREAM-NOT: mgpuStream
// STREAM: [[SP:%[0-9]+]] = llvm.intr.stacksave
// STREAM-NOT: mgpuStream
// STREAM: gpu.launch_func <[[S]] : !llvm.ptr>
// STREAM-NEXT: llvm.intr.stackrestore [[SP]]
// STREAM-NOT: mgpuStream
// STREAM: llvm.call @mgpuStreamSynchronize([[S]])
// STREAM-NEXT: llvm.call @mgpuStreamDestroy([[S]])
// STREAM-NOT: mgpuStream
// STREAM: llvm.return
// STREAM-NOT: gpu.launch_func
// STREAM: gpu.binary
