// RUN: rnn-opt %s -split-input-file -verify-diagnostics --rnn-device-buffers | FileCheck %s

// rnn-device-buffers makes the host's buffers device buffers once every
// loop on them is a kernel: memref.alloc -> gpu.alloc (attributes kept),
// memref.dealloc -> gpu.dealloc, and a whole-buffer memref.copy ->
// gpu.memcpy. These and the kernel launches become async on one stream,
// created at the function's entry and waited for once before the return;
// each launch sits in an alloca scope. Kernels are left alone.

// CHECK-LABEL: func.func @step(
// CHECK-NEXT: [[S:%[[:alnum:]_]+]] = gpu.wait async
// CHECK-NOT: memref.alloc
// CHECK-NOT: gpu.wait
// CHECK: [[BUF:%[[:alnum:]_]+]], {{%[[:alnum:]_]+}} = gpu.alloc async [[[S]]] () {rnn.offset = 0 : i64, rnn.role = "gates"} : memref<2x16xf32>
// CHECK: [[SUB:%[[:alnum:]_]+]] = memref.subview [[BUF]]
// CHECK-NEXT: memref.alloca_scope {
// CHECK-NEXT: gpu.launch_func async [[[S]]] @kernels::@k {{.*}} args([[SUB]] : memref<4xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: }
// CHECK-NEXT: gpu.memcpy async [[[S]]] [[OUT:%[[:alnum:]_]+]], [[BUF]] : memref<2x16xf32>, memref<2x16xf32>
// CHECK-NEXT: gpu.dealloc async [[[S]]] [[BUF]] : memref<2x16xf32>
// CHECK-NEXT: gpu.wait [[[S]]]
// CHECK-NEXT: return
// CHECK: gpu.module @kernels
// CHECK: memref.alloca
// CHECK: memref.store
module attributes {gpu.container_module} {
  func.func @step(%t: index, %out: memref<2x16xf32>) {
    %buf = memref.alloc() {rnn.offset = 0 : i64, rnn.role = "gates"} : memref<2x16xf32>
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %sub = memref.subview %buf[1, %t] [1, 4] [1, 1]
        : memref<2x16xf32> to memref<4xf32, strided<[1], offset: ?>>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1)
        threads in (%c4, %c1, %c1)
        args(%sub : memref<4xf32, strided<[1], offset: ?>>)
    memref.copy %buf, %out : memref<2x16xf32> to memref<2x16xf32>
    memref.dealloc %buf : memref<2x16xf32>
    return
  }
  gpu.module @kernels {
    gpu.func @k(%m: memref<4xf32, strided<[1], offset: ?>>) kernel {
      %i = gpu.thread_id x
      %scratch = memref.alloca() : memref<1xf32>
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %m[%i] : memref<4xf32, strided<[1], offset: ?>>
      gpu.return
    }
  }
}

// -----

// A load left on the host would read device memory.

func.func @host_load(%m: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @below {{host code accesses buffer memory (every access must be in a kernel)}}
  %x = memref.load %m[%c0] : memref<4xf32>
  return %x : f32
}

// -----

// So would a loop on the host that writes a buffer, and a copy of a
// strided view (not one contiguous block). The first access is the error;
// a note says how many more there are (a whole model can have thousands).

func.func @host_loop(%m: memref<4xf32>, %n: memref<2xf32, strided<[2]>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-error @below {{host code accesses buffer memory}}
    memref.store %zero, %m[%i] : memref<4xf32>
  }
  %v = memref.subview %m[0] [2] [2] : memref<4xf32> to memref<2xf32, strided<[2]>>
  // expected-note @below {{1 more host access of buffer memory, the next here}}
  memref.copy %v, %n : memref<2xf32, strided<[2]>> to memref<2xf32, strided<[2]>>
  return
}

// -----

// A launch in a time loop: its stack slots are released every iteration,
// and the loop adds no synchronization; a function without device work
// gets no stream.

// CHECK-LABEL: func.func @loop(
// CHECK-NEXT: [[S:%[[:alnum:]_]+]] = gpu.wait async
// CHECK: scf.for
// CHECK-NEXT: memref.alloca_scope {
// CHECK-NEXT: gpu.launch_func async [[[S]]] @kernels::@k
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: gpu.wait [[[S]]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func @host_only(
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  func.func @loop(%m: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c20000 = arith.constant 20000 : index
    scf.for %t = %c0 to %c20000 step %c1 {
      gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1)
          threads in (%c4, %c1, %c1) args(%m : memref<4xf32>)
    }
    return
  }
  func.func @host_only(%n: index) -> index {
    return %n : index
  }
  gpu.module @kernels {
    gpu.func @k(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// The pass picks the stream: a launch that already has one is rejected.

module attributes {gpu.container_module} {
  func.func @already_async(%m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %s = gpu.wait async
    // expected-error @below {{rnn-device-buffers: expected a synchronous gpu.launch_func (the pass picks the stream)}}
    %t = gpu.launch_func async [%s] @kernels::@k blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.wait [%t]
    return
  }
  gpu.module @kernels {
    gpu.func @k(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A wavefront: the lane ops become the runtime's calls, and the work after
// `rnn.lane 1` (its allocation and launch) goes on the stream that
// mgpuStreamCreate gives right after the lane's call (`gpu.wait async`),
// the lane's; after the join, the function's stream again. Slots are i64.
// The runtime's functions are declared first in the module.

// CHECK-DAG: func.func private @rnnrt_cuda_fork()
// CHECK-DAG: func.func private @rnnrt_cuda_lane(i64)
// CHECK-DAG: func.func private @rnnrt_cuda_signal(i64)
// CHECK-DAG: func.func private @rnnrt_cuda_wait(i64)
// CHECK-DAG: func.func private @rnnrt_cuda_join()
// CHECK-LABEL: func.func @lanes(
// CHECK-NEXT: [[S:%[[:alnum:]_]+]] = gpu.wait async
// CHECK: call @rnnrt_cuda_fork() : () -> ()
// CHECK: [[L0:%[[:alnum:]_]+]] = arith.constant 0 : i64
// CHECK-NEXT: call @rnnrt_cuda_lane([[L0]]) : (i64) -> ()
// CHECK: gpu.launch_func async [[[S]]] @kernels::@k
// CHECK: [[SLOT:%[[:alnum:]_]+]] = arith.index_cast {{%[[:alnum:]_]+}} : index to i64
// CHECK-NEXT: call @rnnrt_cuda_signal([[SLOT]]) : (i64) -> ()
// CHECK: [[L1:%[[:alnum:]_]+]] = arith.constant 1 : i64
// CHECK-NEXT: call @rnnrt_cuda_lane([[L1]]) : (i64) -> ()
// CHECK-NEXT: [[S1:%[[:alnum:]_]+]] = gpu.wait async
// CHECK: gpu.alloc async [[[S1]]] ()
// CHECK: call @rnnrt_cuda_wait({{%[[:alnum:]_]+}}) : (i64) -> ()
// CHECK: gpu.launch_func async [[[S1]]] @kernels::@k
// CHECK: call @rnnrt_cuda_join() : () -> ()
// CHECK-NEXT: gpu.dealloc async [[[S]]]
// CHECK-NEXT: gpu.wait [[[S]]]
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  func.func @lanes(%slot: index, %m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    rnn.fork
    rnn.lane 0
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1)
        threads in (%c4, %c1, %c1) args(%m : memref<4xf32>)
    rnn.signal %slot
    rnn.lane 1
    %buf = memref.alloc() : memref<4xf32>
    rnn.wait %slot
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1)
        threads in (%c4, %c1, %c1) args(%buf : memref<4xf32>)
    rnn.join
    memref.dealloc %buf : memref<4xf32>
    return
  }
  gpu.module @kernels {
    gpu.func @k(%m: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %m[%i] : memref<4xf32>
      gpu.return
    }
  }
}
